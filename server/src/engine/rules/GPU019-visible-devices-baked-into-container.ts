import type { ManifestRule } from "../rule";
import type { EnvSetting } from "../manifests/model";
import { podRequest, type GpuRequest } from "../launch/sources";

/** The CUDA Programming Guide's CUDA_VISIBLE_DEVICES section. */
const CUDA_ENV_DOC =
  "CUDA Programming Guide, 5.2.1.1 CUDA_VISIBLE_DEVICES (https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html)";

/** GPU019: CUDA_VISIBLE_DEVICES (or a numeric NVIDIA_VISIBLE_DEVICES) set in a Dockerfile, compose file or pod spec. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU019",
    name: "visible-devices-baked-into-container",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // CUDA_VISIBLE_DEVICES or NVIDIA_VISIBLE_DEVICES set in a compose environment or a pod's env.
    trigger: (t) => t.includes("VISIBLE_DEVICES"),
    docs: {
      what: "Finds `CUDA_VISIBLE_DEVICES` set in a Dockerfile `ENV`, a compose service's `environment` (also `- CUDA_VISIBLE_DEVICES` without a value, which copies the host's value in) or a Kubernetes container's `env`, and `NVIDIA_VISIBLE_DEVICES` set there to numeric host GPU ids. A value that hides every GPU on purpose (`\"\"`, `\"-1\"`) is left alone; one whose first entry is no GPU id (`all`, `none`, a word) gets a message of its own, since CUDA then sees no GPU at all; and so are `NVIDIA_VISIBLE_DEVICES=none`/`void`, GPU UUIDs (no host index) and `NVIDIA_VISIBLE_DEVICES=all` (NVIDIA's CUDA base images set it), except `all` in the `env` of a Kubernetes container that requests GPUs (`resources.limits` `nvidia.com/gpu: 1`): there it takes the place of the allocation. In a Dockerfile, `# noqa: GPU019` goes on its own line above the `ENV` (a `#` after `ENV K=V` would be part of the instruction); in YAML, on the entry's first line (`- name: NVIDIA_VISIBLE_DEVICES  # noqa: GPU019`).",
      follows:
        "The file itself: a Dockerfile's `ENV` instructions (every stage), each compose service's `environment`, and each Kubernetes container's `env` (every document; `valueFrom` entries included), with that container's `resources.limits` for `NVIDIA_VISIBLE_DEVICES=all`. Not followed: a compose service's GPU reservation next to `NVIDIA_VISIBLE_DEVICES=all` (how Docker merges the two is not established here), Helm templates before rendering, base images (`FROM`), `ARG`, variables exported by `RUN` commands, `env_file` and `.env` files, `envFrom` ConfigMaps and Secrets, and variables given at run time (`docker run -e`).",
      why: "A container sees only the GPUs allocated to it (`docker run --gpus`, compose `deploy.resources.reservations.devices`, the `nvidia.com/gpu` limit in Kubernetes), and CUDA numbers them from 0 inside the container. A host id written into the container's environment therefore picks another GPU than the one meant, or none (`CUDA_VISIBLE_DEVICES=3` in a container given one GPU leaves CUDA with no device), and it keeps doing so on every machine and every allocation the image or manifest meets. `NVIDIA_VISIBLE_DEVICES` is how the NVIDIA container runtime and the Kubernetes device plugin (envvar strategy) pass the allocation; a fixed host id there bypasses the allocation, so two containers can end up on the same GPU (NVIDIA's device plugin documents this as the reason for its volume-mounts strategy). The same goes for `all` in a Kubernetes container that requests GPUs: kubelet puts the container's own `env` after the variables the device plugin returns for the allocation, and the later value of a name is the one the container runtime keeps, so the container's `all` replaces the plugin's list (envvar strategy, the plugin's default) and the pod sees every GPU of the node (otwld/ollama-helm#98: 8 GPUs visible to a pod with a limit of 1, its runners spread over GPUs of other pods; NVIDIA/k8s-device-plugin#1294: a container given one GPU and its own `NVIDIA_VISIBLE_DEVICES` saw two).",
      example:
        'FROM pytorch/pytorch:latest\n# GPU019: host GPU 1 means nothing inside the container\nENV CUDA_VISIBLE_DEVICES=1\nCOPY train.py /app/\nCMD ["python", "/app/train.py"]\n',
      fix: 'FROM pytorch/pytorch:latest\nCOPY train.py /app/\nCMD ["python", "/app/train.py"]\n# allocate at run time: docker run --gpus \'"device=1"\' image\n',
      whenNotToCare:
        "Images that always run with every GPU of a known machine (`--gpus all`), where the id is meant inside the container's numbering; still, `--gpus device=...` says the same thing where it belongs.",
      references: [
        "Docker documentation, 'GPU access' (https://docs.docker.com/engine/containers/gpu/): expose GPUs with `--gpus all` or `--gpus device=<ids>`",
        'NVIDIA Container Toolkit, \'Specialized Configurations with Docker\' (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html): NVIDIA_VISIBLE_DEVICES (comma-separated GPU UUIDs or indexes, `all`, `none`, `void`) controls which GPUs are made accessible inside the container (`all`: "All GPUs are accessible. This is the default value in base CUDA container images"; `none`: "No GPU is accessible, but driver capabilities are enabled"); these words are its own, not values of CUDA_VISIBLE_DEVICES; with `--gpus`, `\'"device=2,3"\'` enumerates GPUs 2 and 3',
        "Docker Compose documentation, 'Run Docker Compose services with GPU access' (https://docs.docker.com/compose/gpu-support/): reserve GPUs with `deploy.resources.reservations.devices` (`count` or `device_ids`)",
        "Kubernetes documentation, 'Schedule GPUs' (https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/); NVIDIA device plugin for Kubernetes: device-list-strategy envvar / volume-mounts, and why envvar lets a container reach GPUs it was not allocated",
        "CUDA C Programming Guide, CUDA environment variables: CUDA_VISIBLE_DEVICES makes only the listed devices visible, renumbered from 0",
        `${CUDA_ENV_DOC}: the values are indices, GPU UUIDs and MIG-<GPU-UUID>/<GPU instance ID>/<compute instance ID>; "If an invalid index is encountered, only devices with indices that appear before the invalid index in the list are visible"`,
        'YanWenKun/ComfyUI-Docker#60 (2024-09-14): a compose service with `CUDA_VISIBLE_DEVICES: all` (beside `NVIDIA_VISIBLE_DEVICES: all` and a reservation of every GPU) failed with PyTorch\'s "RuntimeError: No CUDA GPUs are available", while `docker run --runtime=nvidia --gpus all ubuntu nvidia-smi` on the same host listed the GPU',
        "Kubernetes source, pkg/kubelet/kubelet_pods.go GenerateRunContainerOptions: the options start from the container manager's resources (the device plugins' environment variables) and then `opts.Envs = append(opts.Envs, envs...)` adds the container's own `env`",
        "otwld/ollama-helm#98 (2024-09-15): the chart's `NVIDIA_VISIBLE_DEVICES=all` next to `nvidia.com/gpu: 1` gave the pod all 8 GPUs of the node; removing it let the plugin's `GPU-<uuid>` through. NVIDIA/k8s-device-plugin#1294 (2025-06-24): a container with `nvidia.com/gpu: 1` and its own `NVIDIA_VISIBLE_DEVICES=1` saw two GPUs",
      ],
      language: "dockerfile",
    },
  },
  checkManifest(ctx) {
    for (const e of ctx.manifest.env) {
      // The container's own GPU request (a Kubernetes `nvidia.com/gpu` limit of at least 1).
      const request = e.container ? podRequest(ctx.manifest, e.container) : null;
      const limit = request && request.count > 0 ? request : null;
      const finding = judge(e, limit);
      if (!finding) continue;
      ctx.report({
        range: e.range,
        message: finding,
        ...(e.removal
          ? {
              fix: {
                // A container that already asks for GPUs is told so; others are told how to ask.
                title: limit
                  ? `Remove ${e.name} from the container (its nvidia.com/gpu limit gives it its GPUs)`
                  : `Remove ${e.name} from ${WHERE[e.source]}`,
                edits: e.removal,
                safe: false,
              },
            }
          : {}),
      });
    }
  },
};

const WHERE: Record<EnvSetting["source"], string> = {
  dockerfile: "the image (allocate GPUs with docker run --gpus)",
  compose: "the service (allocate GPUs with deploy.resources.reservations.devices)",
  kubernetes: "the container (allocate GPUs with resources.limits nvidia.com/gpu)",
};

const ALLOCATE: Record<EnvSetting["source"], string> = {
  dockerfile: "allocate GPUs at run time with docker run --gpus '\"device=<ids>\"'",
  compose: "reserve them with deploy.resources.reservations.devices (device_ids or count)",
  kubernetes: "request them with resources.limits nvidia.com/gpu",
};

/**
 * An entry of CUDA_VISIBLE_DEVICES that CUDA reads as a device: an index, a GPU UUID (`GPU-`, also
 * abbreviated) or a MIG instance (`MIG-`) ({@link CUDA_ENV_DOC}).
 */
const CUDA_DEVICE_ENTRY = /^(?:\d+|GPU-[0-9A-Fa-f-]+|MIG-\S+)$/;

/** NVIDIA_VISIBLE_DEVICES' own words, which CUDA does not read. */
const TOOLKIT_WORDS = new Set(["all", "none", "void"]);

/**
 * The message for CUDA_VISIBLE_DEVICES whose first entry is no device id (`all`, `none`, a word):
 * CUDA makes visible only the devices listed before the first invalid entry, here none.
 */
function notAnId(shown: string, where: string, first: string, source: EnvSetting["source"]): string {
  const word = first.toLowerCase();
  const toolkit = TOOLKIT_WORDS.has(word)
    ? ` (\`${word}\` is a value of NVIDIA_VISIBLE_DEVICES, the NVIDIA container toolkit's variable that picks the GPUs a container gets, not of CUDA_VISIBLE_DEVICES)`
    : "";
  const fix =
    word === "none" || word === "void"
      ? `if the container is meant to have no GPU, say so where it is started (no GPU allocated, or NVIDIA_VISIBLE_DEVICES=${word}); otherwise remove it and ${ALLOCATE[source]}`
      : `remove it: without it CUDA sees every GPU the container was given (${ALLOCATE[source]})`;
  return `${shown} ${where}: \`${first}\` is not a GPU id${toolkit}; CUDA takes indices or GPU-/MIG- UUIDs and makes visible only the devices listed before the first entry that is not one, here none: CUDA in the container finds no GPU; ${fix}`;
}

/** The message for a setting that GPU019 reports, or null; `limit`: the container's GPU request, when it asks for GPUs. */
function judge(e: EnvSetting, limit: GpuRequest | null): string | null {
  const value = e.value?.trim();
  const shown =
    e.value === null
      ? e.source === "compose"
        ? `${e.name} (copied from the host)`
        : `${e.name} (from valueFrom)`
      : `${e.name}=${e.value}`;
  const where = e.source === "dockerfile" ? "is baked into the image (ENV)" : `is set for ${e.owner}`;
  if (e.name === "CUDA_VISIBLE_DEVICES") {
    if (value === "" || value === "-1") return null;
    const first = value?.split(",")[0].trim();
    if (value !== undefined && first !== undefined && !value.includes("$") && !CUDA_DEVICE_ENTRY.test(first))
      return notAnId(shown, where, first, e.source);
    return `${shown} ${where}: the container already sees only the GPUs allocated to it, renumbered from 0, so a host id here picks another GPU or none; remove it and ${ALLOCATE[e.source]}`;
  }
  if (
    e.name === "NVIDIA_VISIBLE_DEVICES" &&
    value !== undefined &&
    value.split(",").some((t) => /^\d+$/.test(t.trim()))
  ) {
    return `${shown} ${where}: a fixed host GPU id bypasses the allocation (the runtime and the device plugin set this variable from it), so containers can land on the same GPU; remove it and ${ALLOCATE[e.source]}`;
  }
  if (e.name === "NVIDIA_VISIBLE_DEVICES" && value === "all" && limit)
    return `${shown} ${where}, which requests ${limit.from}: the device plugin passes the GPUs it allocated in this same variable (its default envvar strategy), and the container's own value takes their place, so the container sees every GPU of the node, also those allocated to other pods; remove it, the limit alone gives the container its GPUs`;
  return null;
}
