import type { Node, YAMLSeq } from "yaml";
import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { PodContainer } from "../manifests/model";
import type { TextEdit } from "../types";
import { isGpuResource } from "./GPU018-k8s-gpu-resources";
import {
  contentEnd,
  insertPairs,
  isMap,
  isSeq,
  itemStart,
  pairOf,
  scalarText,
  valueAt,
  valueOf,
} from "../manifests/yaml";

/** GPU066: a Kubernetes container that requests no GPU but runs an image that sets NVIDIA_VISIBLE_DEVICES=all. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU066",
    name: "cuda-image-without-gpu-request",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    preview: true,
    // The image names of `cudaImage` (a container's `image` value, one line of the source).
    trigger: (t, kind) => kind === "yaml" && IMAGE_NEEDLES.some((n) => t.includes(n)),
    docs: {
      what: "Finds a container of a Kubernetes pod spec that requests no GPU (no `nvidia.com/gpu`, `nvidia.com/mig-*`, `nvidia.com/gpu.shared` or `amd.com/gpu` in its `resources`, or a count of 0) but runs an image known to set `NVIDIA_VISIBLE_DEVICES=all`: NVIDIA's CUDA images (`nvidia/cuda`, also from `nvcr.io` or a mirror) and images built on them whose build is public: `pytorch/pytorch`, `vllm/vllm-openai`, and Ray's GPU images (`rayproject/ray` and `rayproject/ray-ml` with a `-gpu` or `-cuNNN` tag). A container that sets `NVIDIA_VISIBLE_DEVICES` itself (`void`, `none`, `all` on purpose) is left alone.",
      follows:
        "The Kubernetes manifest itself: every container (not the init containers) of every pod spec (Pods, workloads' templates, CronJobs, templates inside custom resources such as a RayCluster's groups), in every document, with its `image`, `resources` and `env`. Not followed: DaemonSets (node agents such as GPU exporters run on purpose with every GPU of their node), templates that another object completes with its resources: Kubeflow Trainer's `TrainingRuntime`/`ClusterTrainingRuntime` (the TrainJob gives them), KServe's `ServingRuntime`/`ClusterServingRuntime` (the InferenceService's predictor is merged into the runtime's container) and a RoleBasedGroup's `roleTemplates` (each role patches its template), a pod with an annotation that names GPUs (KAI Scheduler's `gpu-fraction`: its GPUs come from the scheduler), a container with any resource that names GPUs (`aliyun.com/gpu-mem`, `nvidia.com/gpumem`), images that are not in the list above (an image built `FROM nvidia/cuda` in your own Dockerfile is not known here), an image or a GPU count left to a template (`{{ }}`, `${ }`), `envFrom` (it may set the variable: the container is left alone), the node's container runtime, and Helm or Kustomize sources before rendering.",
      why: "The NVIDIA Container Toolkit exposes GPUs to a container according to `NVIDIA_VISIBLE_DEVICES`, and `all` (every GPU is accessible) is the default value in NVIDIA's base CUDA images; images built on them inherit it. The NVIDIA device plugin asks for the NVIDIA runtime to be the node's default low-level runtime, and warns that a container that requests no GPU is given every GPU of the machine: the plugin's allocation is never asked for, and the runtime reads the image's `all`. So a 'CPU' pod on a GPU node sees every GPU of that node, outside Kubernetes' accounting: a framework that counts the GPUs it sees (Ray, vLLM, PyTorch's `cuda.is_available()`) uses GPUs that the scheduler gave to other pods (neutree-ai/neutree#96: the workers of a CPU-only Ray cluster, on a CUDA image, detected and used the node's GPUs; NVIDIA/k8s-device-plugin#87). `NVIDIA_VISIBLE_DEVICES=void` in the container's env makes the NVIDIA runtime behave as runc: no GPU and no driver is injected.",
      example:
        'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cpu-workers\nspec:\n  template:\n    spec:\n      containers:\n        - name: worker\n          image: rayproject/ray:2.40.0-py311-cu121   # GPU066: no GPU requested\n          command: ["ray", "start", "--block", "--address=ray-head:6379"]\n          resources:\n            limits:\n              cpu: "8"\n',
      fix: 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cpu-workers\nspec:\n  template:\n    spec:\n      containers:\n        - name: worker\n          image: rayproject/ray:2.40.0-py311-cu121\n          command: ["ray", "start", "--block", "--address=ray-head:6379"]\n          env:\n            - name: NVIDIA_VISIBLE_DEVICES\n              value: void\n          resources:\n            limits:\n              cpu: "8"\n',
      whenNotToCare:
        "Nodes whose default container runtime is not the NVIDIA one (with a `RuntimeClass` that pods must name, or a device plugin that mounts devices itself, as on GKE): there the image's variable has no effect. Pods that never land on a GPU node (a node pool without GPUs, a taint the pod does not tolerate). A pod meant to see every GPU of its node without requesting them (a monitoring tool run as a Deployment): say so with `NVIDIA_VISIBLE_DEVICES=all` in its env, which this rule leaves alone. Preview: on public manifests (62 repositories, 1,411 files, 2026-12-07) it gave 10 findings, none confirmed true: 6 were shortened samples or heads on GKE (no NVIDIA default runtime), 4 could not be told from the manifest; the node's default runtime is not in the manifest.",
      references: [
        "NVIDIA Container Toolkit documentation, 'Specialized Configurations with Docker' (NVIDIA/cloud-native-docs@52dcb7b8 container-toolkit/docker-specialized.md:12, :33, :38): these variables are already set in the NVIDIA-provided base CUDA images; `all`: all GPUs are accessible, the default value in base CUDA container images; `void` or empty or unset: the runtime behaves as runc (neither GPUs nor capabilities are exposed)",
        "NVIDIA device plugin for Kubernetes, README (NVIDIA/k8s-device-plugin@1b826acc README.md:77, :86, :206): prerequisite 'nvidia-container-runtime configured as the default low-level runtime'; 'If you do not request GPUs when you use the device plugin, the plugin exposes all the GPUs on the machine inside your container.'",
        "Images built on CUDA images: pytorch/pytorch@01343dcd Dockerfile, stage `official`: `ENV NVIDIA_VISIBLE_DEVICES all`; ray-project/ray@00c1d517 docker/base-deps/cuda.wanda.yaml: the `-cuNNN` images are built with `BASE_IMAGE=nvidia/cuda:$CUDA_VERSION-devel-ubuntu24.04`; vllm-project/vllm@0000977e docker/Dockerfile: `ARG FINAL_BASE_IMAGE=nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04`, `FROM ${FINAL_BASE_IMAGE} AS vllm-base`",
        "NVIDIA/k8s-device-plugin#87 (2019): a pod with no GPU limit on a CUDA image sees every GPU of the node where nvidia is the default runtime; the maintainer called it a known limitation of the device plugin API. neutree-ai/neutree#96 (2025-07-25): NVIDIA_VISIBLE_DEVICES=void added to the containers of a CPU Ray cluster, after which Ray detects no GPU",
      ],
      language: "yaml",
    },
  },
  checkManifest(ctx) {
    for (const c of ctx.manifest.containers) {
      if (c.field !== "containers" || SKIPPED_OWNERS.some((k) => c.owner.startsWith(`${k} `) || c.owner === k))
        continue;
      if (c.path.includes("roleTemplates")) continue;
      if (gpuAnnotation(c)) continue;
      const imageNode = pairOf(c.node, "image")?.value;
      const image = scalarText(imageNode);
      if (!image || !imageNode || templated(image) || !cudaImage(image)) continue;
      if (requestsGpu(c) !== false) continue;
      if (pairOf(c.node, "envFrom")) continue;
      if (ctx.manifest.env.some((e) => e.container === c.node && e.name === "NVIDIA_VISIBLE_DEVICES")) continue;
      const who = `container${c.name === null ? "" : ` "${c.name}"`} of ${c.owner || "this manifest"}`;
      const edits = voidEnv(ctx, c);
      ctx.report({
        range: ctx.manifest.src.range(imageNode.range?.[0] ?? 0, contentEnd(imageNode)),
        message: `${who} requests no GPU (no nvidia.com/gpu limit), but its image ${image} sets NVIDIA_VISIBLE_DEVICES=all (NVIDIA's CUDA images do): on a node whose default runtime is the NVIDIA one, the container sees every GPU of the node, outside Kubernetes' accounting, GPUs allocated to other pods included; set NVIDIA_VISIBLE_DEVICES=void in its env if it needs no GPU, or request GPUs with resources.limits nvidia.com/gpu`,
        ...(edits
          ? { fix: { title: "Add NVIDIA_VISIBLE_DEVICES=void to the container's env (no GPU)", edits, safe: false } }
          : {}),
      });
    }
  },
};

/**
 * Owners whose containers are not reported: a DaemonSet (a node agent, such as a GPU exporter, that
 * sees every GPU on purpose), Kubeflow Trainer's runtimes (templates whose resources a TrainJob fills
 * in) and KServe's serving runtimes (templates: the controller merges the InferenceService's predictor
 * container, its resources included, into the runtime's container, kserve/kserve@aaac4e29
 * pkg/controller/v1beta1/inferenceservice/utils/utils.go:253 MergeRuntimeContainers). A
 * RoleBasedGroup's `roleTemplates` are skipped by path: each role that names one patches it
 * (`templateRef`, `templatePatch`), often with the GPU limit.
 */
const SKIPPED_OWNERS = [
  "DaemonSet",
  "TrainingRuntime",
  "ClusterTrainingRuntime",
  "ServingRuntime",
  "ClusterServingRuntime",
];

/**
 * Whether the pod has an annotation whose key names GPUs (KAI Scheduler's and Run:ai's
 * `gpu-fraction`, `gpu-memory`): a scheduler that gives GPUs without a resource request.
 */
function gpuAnnotation(c: PodContainer): boolean {
  const annotations = valueOf(c.podMetadata, "annotations");
  return isMap(annotations) && annotations.items.some((p) => /gpu/i.test(scalarText(p.key) ?? ""));
}

/** Substrings of the image names below (the trigger). */
const IMAGE_NEEDLES = ["nvidia/cuda", "pytorch/pytorch", "rayproject/ray", "vllm/vllm-openai"];

/** A value left to a template engine or env substitution. */
const templated = (s: string) => s.includes("${") || s.includes("{{");

/**
 * Whether an image reference names an image known to set NVIDIA_VISIBLE_DEVICES=all: `nvidia/cuda`
 * (any registry or mirror path before it), `pytorch/pytorch`, `vllm/vllm-openai`, and
 * `rayproject/ray[-ml]` with a `-gpu`/`-cuNNN` tag (the CPU tags of Ray are built on Ubuntu).
 */
export function cudaImage(ref: string): boolean {
  const noDigest = ref.trim().split("@")[0];
  const slash = noDigest.lastIndexOf("/");
  const colon = noDigest.lastIndexOf(":");
  const path = (colon > slash ? noDigest.slice(0, colon) : noDigest).toLowerCase();
  const tag = colon > slash ? noDigest.slice(colon + 1).toLowerCase() : "latest";
  const named = (repo: string) => path === repo || path.endsWith(`/${repo}`);
  if (named("nvidia/cuda") || named("pytorch/pytorch") || named("vllm/vllm-openai")) return true;
  if (named("rayproject/ray") || named("rayproject/ray-ml")) return /(?:^|-)(?:gpu|cu\d{3,})(?:$|-)/.test(tag);
  return false;
}

/**
 * Whether the container requests a GPU: true for a GPU resource with a count other than a literal
 * 0, false for none (or only zeros), null when a count is left to a template or is not a scalar.
 * A DRA claim (`resources.claims`) counts as a request.
 */
function requestsGpu(c: PodContainer): boolean | null {
  if (valueAt(c.node, ["resources", "claims"])) return true;
  let unknown = false;
  for (const field of ["limits", "requests"]) {
    const m = valueAt(c.node, ["resources", field]);
    if (!isMap(m)) continue;
    for (const p of m.items) {
      const k = scalarText(p.key);
      // The device plugins' names and any other resource that names GPUs (HAMi's nvidia.com/gpumem, aliyun.com/gpu-mem).
      if (!k || !(isGpuResource(k) || /gpu/i.test(k))) continue;
      const v = scalarText(p.value)?.trim();
      if (v === undefined || templated(v)) unknown = true;
      else if (!/^0+(?:\.0*)?$/.test(v)) return true;
    }
  }
  return unknown ? null : false;
}

/** The edits that add `NVIDIA_VISIBLE_DEVICES=void` to the container's env (a new `env` when it has none); null when not plain. */
function voidEnv(ctx: ManifestRuleContext, c: PodContainer): TextEdit[] | null {
  const src = ctx.manifest.src;
  const envPair = pairOf(c.node, "env");
  if (!envPair)
    return insertPairs(
      src,
      c.node,
      ["env:", "  - name: NVIDIA_VISIBLE_DEVICES", "    value: void"],
      "env: [{name: NVIDIA_VISIBLE_DEVICES, value: void}]",
    );
  const list = envPair.value;
  if (!isSeq(list) || list.flow || !list.items.length) return null;
  const seq = list as YAMLSeq;
  const dash = itemStart(src.text, seq, 0);
  if (dash === null) return null;
  const indent = " ".repeat(src.position(dash).character);
  const last = seq.items[seq.items.length - 1] as Node;
  const at = src.position(src.lineEnd(src.lineOf(Math.max(last.range?.[0] ?? 0, contentEnd(last) - 1))));
  const eol = src.eol;
  return [
    {
      range: { start: at, end: at },
      newText: `${eol}${indent}- name: NVIDIA_VISIBLE_DEVICES${eol}${indent}  value: void`,
    },
  ];
}
