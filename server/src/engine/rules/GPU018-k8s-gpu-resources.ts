import type { Node, Pair, YAMLMap } from "yaml";
import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { PodContainer } from "../manifests/model";
import type { Fix, TextEdit } from "../types";
import {
  contentEnd,
  indentStep,
  insertPairs,
  isMap,
  pairOf,
  pairStart,
  replaceNode,
  scalarText,
} from "../manifests/yaml";

/** GPU018: a Kubernetes container whose GPU resources the API server rejects (request without limit, request ≠ limit, a fraction). */
export const rule: ManifestRule = {
  meta: {
    code: "GPU018",
    name: "k8s-gpu-resources",
    severity: "error",
    fixable: true,
    fixSafety: "both",
    // A GPU resource name in a container's limits or requests (`isGpuResource`): nvidia.com/gpu,
    // nvidia.com/gpu.shared, nvidia.com/mig-*, amd.com/gpu; pod containers are read from YAML, not compose files.
    trigger: (t, kind) => kind === "yaml" && (t.includes("nvidia.com/") || t.includes("amd.com/gpu")),
    docs: {
      what: "Checks the GPU resources (`nvidia.com/gpu`, `nvidia.com/mig-*`, `nvidia.com/gpu.shared`, `amd.com/gpu`) of every container in a Kubernetes manifest: a GPU request without a limit, a request that differs from the limit, and a count that is not a whole number (`0.5`, `500m`, `1.5`). Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs (`jobTemplate`) and pod templates inside custom resources are read; every document of a multi-document file.",
      follows:
        "The Kubernetes manifest itself: every container and init container of every pod spec in it (Pods, workloads' pod templates, CronJobs' job templates, templates inside custom resources), in every document of the file. Not followed: Helm or Kustomize sources (templates, values files, overlays), other manifests (a LimitRange that sets default limits), and values left to a template engine (`{{ }}`, `${ }`).",
      why: "The Kubernetes documentation ('Schedule GPUs') says GPUs are only supposed to be specified in `limits`: you may give a limit without a request (the limit is then the request), you may give both but they must be equal, and you cannot give a request without a limit. GPUs are extended resources, which cannot be overcommitted and are allocated as whole devices: containers do not share GPUs and a fraction of a GPU cannot be requested. The API server rejects such a pod (or the workload's pods never get created), so the job never starts; sharing a GPU goes through the NVIDIA device plugin's time-slicing or MIG resources instead, which are still whole-number counts.",
      example:
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n        - name: train\n          image: pytorch/pytorch:latest\n          resources:\n            requests:\n              nvidia.com/gpu: 1   # GPU018: a request without a limit\n",
      fix: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n        - name: train\n          image: pytorch/pytorch:latest\n          resources:\n            limits:\n              nvidia.com/gpu: 1\n",
      whenNotToCare:
        "Helm or Kustomize templates whose values are filled in later are not read (only YAML that parses, and a value written as `${...}` or `{{ ... }}` is skipped); a cluster whose admission webhook rewrites GPU resources (e.g. a fractional-GPU scheduler with its own resource names) uses other names than these.",
      references: [
        "Kubernetes documentation, 'Schedule GPUs' (https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/): GPUs are only supposed to be specified in the limits section; requests, if given, must equal limits; you cannot specify requests without limits; containers do not share GPUs and fractions cannot be requested",
        "Kubernetes documentation, 'Resource Management for Pods and Containers', extended resources: they cannot be overcommitted, so request and limit must be equal if both are present, and only integer amounts are allowed",
        "NVIDIA device plugin for Kubernetes (NVIDIA/k8s-device-plugin README): the plugin exposes `nvidia.com/gpu` (and `nvidia.com/mig-<profile>` with the mixed MIG strategy); time-slicing shares a GPU through replicas that are still requested as whole `nvidia.com/gpu` units",
      ],
      language: "yaml",
    },
  },
  checkManifest(ctx) {
    for (const c of ctx.manifest.containers) checkContainer(ctx, c);
  },
};

/** Resource names of GPUs (device plugins of NVIDIA and AMD). */
export function isGpuResource(name: string): boolean {
  return (
    name === "nvidia.com/gpu" ||
    name === "nvidia.com/gpu.shared" ||
    name.startsWith("nvidia.com/mig-") ||
    name === "amd.com/gpu"
  );
}

const SUFFIX: Record<string, number> = {
  "": 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The amount of a Kubernetes quantity (`1`, `0.5`, `500m`, `1e3`, `2Ki`), or null when it is none. */
export function parseQuantity(text: string): number | null {
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]) * (m[2] !== undefined ? 10 ** Number(m[2]) : SUFFIX[m[3] ?? ""]);
  return Number.isFinite(n) ? n : null;
}

/** A value left to a template engine or env substitution: not ours to judge. */
const templated = (s: string) => s.includes("${") || s.includes("{{");

interface Amount {
  pair: Pair<Node, Node | null>;
  text: string;
  value: number | null;
}

function amountOf(map: unknown, name: string): Amount | null {
  const pair = pairOf(map, name);
  if (!pair) return null;
  const text = scalarText(pair.value) ?? "";
  return { pair, text, value: parseQuantity(text) };
}

function checkContainer(ctx: ManifestRuleContext, c: PodContainer): void {
  const resPair = pairOf(c.node, "resources");
  const resources = resPair?.value;
  if (!resPair || !isMap(resources)) return;
  const limitsPair = pairOf(resources, "limits");
  const requestsPair = pairOf(resources, "requests");
  const limits = limitsPair?.value;
  const requests = requestsPair?.value;
  const names = new Set<string>();
  for (const m of [limits, requests]) {
    if (isMap(m))
      for (const p of m.items) {
        const k = scalarText(p.key);
        if (k && isGpuResource(k)) names.add(k);
      }
  }
  const src = ctx.manifest.src;
  const who = `container${c.name === null ? "" : ` "${c.name}"`} of ${c.owner || "this manifest"}`;
  const rangeOf = (a: Amount) => src.range(pairStart(a.pair), contentEnd(a.pair));
  for (const name of names) {
    const limit = amountOf(limits, name);
    const request = amountOf(requests, name);
    if ([limit, request].some((a) => a && templated(a.text))) continue;
    // An empty or `null` amount is a placeholder of a template to be filled in (jax's examples/k8s
    // has `nvidia.com/gpu: null`), not a count Kubernetes is asked to schedule.
    if ([limit, request].some((a) => a && (a.text.trim() === "" || /^(null|~)$/i.test(a.text.trim())))) continue;

    // A count that is not a whole number of devices.
    const bad = [limit, request].find(
      (a): a is Amount => !!a && (a.value === null || a.value < 0 || !Number.isInteger(a.value)),
    );
    if (bad) {
      const whole = bad.value !== null && bad.value > 0 ? Math.ceil(bad.value) : null;
      const edits: TextEdit[] =
        whole === null
          ? []
          : [limit, request].flatMap((a) => (a && a.pair.value ? replaceNode(src, a.pair.value, String(whole)) : []));
      ctx.report({
        range: rangeOf(bad),
        message: `${name}: ${bad.text || "(empty)"} in ${bad === limit ? "limits" : "requests"} of ${who} is not a whole number of GPUs: GPUs are allocated as whole devices (no fractions, no sharing through requests), so Kubernetes rejects the pod`,
        ...(whole !== null && edits.length
          ? {
              fix: {
                title: `Request ${whole} whole GPU${whole === 1 ? "" : "s"} (${name}: ${whole})`,
                edits,
                safe: false,
              },
            }
          : {}),
      });
      continue;
    }

    // A request without a limit.
    if (request && !limit) {
      const n = request.value!;
      const fix = addLimit(ctx, resources, resPair, limitsPair ?? null, name, n);
      ctx.report({
        range: rangeOf(request),
        message: `${name}: ${request.text} is requested by ${who} without a limit: GPUs are specified in limits (the limit is also the request), and Kubernetes rejects a GPU request that has no limit`,
        ...(fix ? { fix } : {}),
      });
      continue;
    }

    // A request that differs from the limit.
    if (request && limit && request.value !== limit.value && request.pair.value) {
      ctx.report({
        range: rangeOf(request),
        message: `${name}: requests ${request.text} differs from limits ${limit.text} in ${who}: for GPUs the request must equal the limit (they cannot be overcommitted), so Kubernetes rejects the pod`,
        related: [{ range: rangeOf(limit), message: `the limit: ${name}: ${limit.text}` }],
        fix: {
          title: `Set the ${name} request to the limit (${limit.text})`,
          edits: replaceNode(src, request.pair.value, String(limit.value)),
          safe: false,
        },
      });
    }
  }
}

/** The fix that adds `limits: {name: n}` (or the name to an existing limits mapping). Safe: it is what the request already asked for. */
function addLimit(
  ctx: ManifestRuleContext,
  resources: YAMLMap,
  resPair: Pair,
  limitsPair: Pair | null,
  name: string,
  n: number,
): Fix | null {
  const src = ctx.manifest.src;
  const entry = `${name}: ${n}`;
  let edits: TextEdit[] | null;
  if (limitsPair && isMap(limitsPair.value)) edits = insertPairs(src, limitsPair.value, [entry], entry);
  else if (limitsPair) edits = null;
  else {
    const requestsPair = pairOf(resources, "requests");
    const step = requestsPair ? indentStep(src, requestsPair) : indentStep(src, resPair);
    edits = insertPairs(src, resources, ["limits:", `${" ".repeat(step)}${entry}`], `limits: {${entry}}`);
  }
  return edits ? { title: `Set limits ${entry} (equal to the request)`, edits, safe: true } : null;
}
