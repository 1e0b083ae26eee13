import type { Node, Pair, YAMLMap } from "yaml";
import type { ManifestRule } from "../rule";
import { podRequest } from "../launch/sources";
import { contentEnd, isMap, isScalar, pairOf, pairStart, removePair } from "../manifests/yaml";

/**
 * The GPU count from which a request is taken as the whole node (8: DGX/HGX nodes), when the
 * machine is not known: such a pod sees no GPU that is not its own.
 */
const WHOLE_NODE = 8;

/** GPU067: `securityContext.privileged: true` on a Kubernetes container that requests some of the node's GPUs. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU067",
    name: "privileged-container-sees-all-gpus",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    preview: true,
    // A container's `privileged` key beside an `nvidia.com/gpu` limit (podRequest).
    trigger: (t, kind) => kind === "yaml" && t.includes("privileged") && t.includes("nvidia.com/gpu"),
    docs: {
      what: "Finds a container of a Kubernetes pod spec with `securityContext.privileged: true` and a limit of `nvidia.com/gpu` (a whole number from 1 up to 7, or below the machine's GPU count when it is known, `--gpus N`): a privileged container gets every device of the host, so it sees every GPU of the node, not only those the device plugin allocated to it.",
      follows:
        "The Kubernetes manifest itself: every container and init container of every pod spec (Pods, workloads' templates, CronJobs, templates inside custom resources), in every document, with its `securityContext.privileged` and its `resources.limits` `nvidia.com/gpu`. Not followed: a count left to a template, MIG and shared resources (`nvidia.com/mig-*`, `nvidia.com/gpu.shared`), the container runtime's settings (`privileged_without_host_devices`), and Helm or Kustomize sources before rendering. A limit of 8 GPUs or more is taken as the whole node (DGX and HGX nodes have 8) and not reported, unless the machine is known (`--gpus N`) and has more.",
      why: "Kubernetes tells the device plugin's allocation to the container through `NVIDIA_VISIBLE_DEVICES` (or mounts), and the NVIDIA runtime then injects only those GPUs' device nodes. A privileged container bypasses that: containerd's CRI adds every host device to a privileged container and allows them all (`oci.WithHostDevices`, `oci.WithAllDevicesAllowed`, unless the runtime sets `privileged_without_host_devices`), CRI-O and Docker do the same, so every `/dev/nvidiaN` of the node is there and CUDA enumerates all of them. The program sees all the node's GPUs, its device 0 need not be one it was given, and it runs on GPUs that Kubernetes allocated to other pods (NVIDIA/k8s-device-plugin#336: a pod limited to 2 of 8 GPUs benchmarked all 8 until `privileged` was dropped; #161, where a maintainer answered that it is the expected behaviour; NVIDIA/nvidia-docker#764: `--privileged` allowlists every device, by Docker's design).",
      example:
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bench\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: bench\n          image: nvidia/cuda:12.4.1-base-ubuntu22.04\n          securityContext:\n            privileged: true   # GPU067: sees every GPU of the node\n          resources:\n            limits:\n              nvidia.com/gpu: 2\n",
      fix: 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: bench\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n        - name: bench\n          image: nvidia/cuda:12.4.1-base-ubuntu22.04\n          securityContext:\n            capabilities:\n              add: ["SYS_ADMIN"]   # only what it needs, not every device\n          resources:\n            limits:\n              nvidia.com/gpu: 2\n',
      whenNotToCare:
        "A pod that takes every GPU of its node (a limit equal to the node's GPU count: give `--gpus N` to say how many the machine has) sees no other pod's GPU. A container runtime configured with `privileged_without_host_devices = true` (Kata Containers) does not pass host devices. A privileged container that needs its privileges (a driver or a monitoring agent) and runs alone on its node. Preview: on public manifests (62 repositories, 1,411 files, 2026-12-07) it gave 3 findings, all pods whose limit was every GPU of their node pool's machine type (noise); the node's GPU count is not in the manifest.",
      references: [
        "containerd source, containerd/containerd@301026e5 internal/cri/server/container_create.go:803-809: for a privileged container, `if !ociRuntime.PrivilegedWithoutHostDevices { specOpts = append(specOpts, oci.WithHostDevices, oci.WithAllDevicesAllowed) }`; docs/cri/config.md:562-565: `privileged_without_host_devices` 'allows overloading the default behaviour of passing host devices through to privileged containers ... Defaults to false - i.e pass host devices through to privileged containers'",
        "NVIDIA/nvidia-docker#764 (2018): with `--privileged` and one GPU selected, nvidia-smi lists every GPU; the maintainer: 'this is by design of the --privileged option of Docker, it whitelists all devices' (`a *:* rwm` in the device cgroup)",
        "NVIDIA/k8s-device-plugin#161 (2020): a Deployment with `privileged: true` saw all six GPUs of the node despite its limit; the maintainer: 'This is the expected behavior, see: NVIDIA/nvidia-docker#764'. NVIDIA/k8s-device-plugin#336 (2022-10-01): `privileged` made a pod with `nvidia.com/gpu: 2` see all 8 GPUs",
        "gpustack/runtime#15 (2026-08-02), measured on an 8-GPU H100 node: a privileged pod lists all eight cards with `nvidia-smi -L` although its NVIDIA_VISIBLE_DEVICES names only the one it was allocated",
      ],
      language: "yaml",
    },
  },
  checkManifest(ctx) {
    const nodeGpus = ctx.machine.gpuCount;
    for (const c of ctx.manifest.containers) {
      const sc = pairOf(c.node, "securityContext");
      const priv = isMap(sc?.value) ? pairOf(sc.value, "privileged") : null;
      if (!sc || !priv || !isTrue(priv.value)) continue;
      const request = podRequest(ctx.manifest, c.node);
      if (!request || request.count < 1) continue;
      if (nodeGpus !== null ? request.count >= nodeGpus : request.count >= WHOLE_NODE) continue;
      const who = `container${c.name === null ? "" : ` "${c.name}"`} of ${c.owner || "this manifest"}`;
      const src = ctx.manifest.src;
      const edits = removePair(src, sc.value as YAMLMap, priv as Pair, { map: c.node, pair: sc as Pair });
      ctx.report({
        range: src.range(pairStart(priv), contentEnd(priv)),
        message: `${who} is privileged and requests ${request.from}: a privileged container is given every device of the host, so it sees every GPU of the node, not only the ${request.count} allocated to it, and CUDA numbers them all: its device 0 need not be one of its own, and it can run on GPUs that Kubernetes gave to other pods; drop privileged (add only the capabilities it needs)`,
        related: [{ range: request.range, message: `the GPU limit: ${request.from}` }],
        ...(edits
          ? {
              fix: {
                title: "Remove privileged: true (the container keeps only its allocated GPUs)",
                edits,
                safe: false,
              },
            }
          : {}),
      });
    }
  },
};

/** `true` as Kubernetes reads it (YAML's `true`, `True`, `TRUE`; a quoted "true" is a string and is rejected). */
function isTrue(node: Node | null): boolean {
  return isScalar(node) && node.value === true;
}
