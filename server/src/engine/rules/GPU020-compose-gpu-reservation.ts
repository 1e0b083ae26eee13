import type { Node, Pair, YAMLMap } from "yaml";
import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ComposeService } from "../manifests/model";
import type { TextEdit } from "../types";
import {
  contentEnd,
  insertPairs,
  isMap,
  isScalar,
  isSeq,
  pairOf,
  pairStart,
  removePair,
  replaceNode,
  valueAt,
  valueOf,
} from "../manifests/yaml";

/** GPU020: a compose GPU reservation with both count and device_ids, without capabilities, or with a count that is no number. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU020",
    name: "compose-gpu-reservation",
    severity: "error",
    fixable: true,
    fixSafety: "both",
    // services.<name>.deploy.resources.reservations.devices of a compose file.
    trigger: (t, kind) => kind === "compose" && t.includes("devices") && t.includes("services"),
    docs: {
      what: 'Checks each entry of `deploy.resources.reservations.devices` in a compose file: `count` and `device_ids` both set, neither set on a GPU request (a warning: Docker Engine 27.3 and later then give no GPU), `capabilities` missing or empty, and a `count` written as a string that is neither `all` nor a whole number (a quoted number such as `"2"` is reported as information: Compose reads it, but the documented form is an integer), and a `device_ids` entry of an NVIDIA request that holds a brace, such as `{GPU_ID:-0}` written without the `$` of an interpolation.',
      follows:
        "The compose file itself: each entry of every service's `deploy.resources.reservations.devices`, and the service's `runtime`. Not followed: other compose files merged with it (`-f` overrides, `extends`, `include`), and values filled in by interpolation (a `${...}` count is skipped).",
      why: "The Compose Deploy Specification says `count` and `device_ids` are exclusive and Compose returns an error if both are specified; the GPU support page says `capabilities` must be set, otherwise deploying the service fails. `count` is an integer or `all`: `count: \"0,1\"` (device ids written as a count) is refused with 'the only value allowed is all or a number'. Each of these stops `docker compose up` before any container starts. A GPU request with neither `count` nor `device_ids` was documented as 'all GPUs', but Docker Engine 27.3 and later (moby/moby#48483) give such a container `NVIDIA_VISIBLE_DEVICES=void` and no GPU at all: reported in docker/docs#21026 and #20588 and by NVIDIA Morpheus (#2099, fixed by writing `count: all`). Compose interpolates only `$NAME` and `${NAME...}` (its pattern starts with the `$`), so `device_ids: [\"{GPU_ID:-0}\"]` reaches the NVIDIA Container Toolkit as written; the toolkit takes an index, a `GPU-`/`MIG-` UUID, a PCI bus id, `N:M` or `all` (a CDI name has no brace either) and refuses anything else with 'unknown device', so the container does not start.",
      example:
        'services:\n  train:\n    image: pytorch/pytorch:latest\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 1                # GPU020: count and device_ids are exclusive\n              device_ids: ["1"]\n',
      fix: 'services:\n  train:\n    image: pytorch/pytorch:latest\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              device_ids: ["1"]\n              capabilities: [gpu]\n',
      whenNotToCare:
        "Values filled in by interpolation (`count: ${GPU_COUNT}`) are skipped: Compose substitutes them before it checks. Only files named like compose files (`compose*.yaml`, `docker-compose*.yml`) are read.",
      references: [
        "Docker Compose documentation, 'Run Docker Compose services with GPU access' (https://docs.docker.com/compose/gpu-support/): `capabilities` must be set or deployment fails; `count` is an integer or `all`; `device_ids` are host GPU ids as nvidia-smi shows them",
        "Compose Deploy Specification, devices (https://docs.docker.com/reference/compose-file/deploy/): `count` and `device_ids` fields are exclusive; Compose returns an error if both are specified",
        "docker/docs#21026 (2024-09-28): 'Since moby v27.3.0, either device_ids or count must be specified to load GPUs' (moby/moby#48483); skipping both sets NVIDIA_VISIBLE_DEVICES=void; also docker/docs#20588 and nv-morpheus/Morpheus#2099",
        'compose-go (the loader of docker compose), DeviceRequest: "capabilities" attribute is mandatory; "count" and "device_ids" are exclusive; count accepts only \'all\' or a number',
        "compose-go, template/template.go (compose-spec/compose-go@8ce8973e58272cd80ff658488744429851e16197, lines 27-35): the interpolation pattern begins with the `$` delimiter (`$$`, `$NAME`, `${NAME...}`); text without it is left as written",
        "libnvidia-container, src/cli/common.c `select_devices` (NVIDIA/libnvidia-container@2e347c194079961526befcfb9d77d4aed7410afc): each comma-separated id must be `all`, a GPU UUID (`GPU-`), a PCI bus id, an index, a MIG UUID (`MIG-`) or `<gpu>:<mig>`; any other is 'unknown device' (nvidia-container-cli: device error: {GPU_ID:-0}: unknown device, MaskAnyone/MaskAnyone#61)",
      ],
      language: "yaml",
    },
  },
  checkManifest(ctx) {
    for (const s of ctx.manifest.services) {
      const devices = valueAt(s.node, ["deploy", "resources", "reservations", "devices"]);
      if (!isSeq(devices)) continue;
      for (const d of devices.items) if (isMap(d)) checkDevice(ctx, s, d as YAMLMap);
    }
  },
};

const templated = (s: string) => s.includes("$");

/** `{NAME}`, `{NAME:-default}` (also `-`, `?`, `+` forms): Compose's braced interpolation written without its `$`. */
const BRACED_WITHOUT_DOLLAR = /^\{[_A-Za-z][_A-Za-z0-9]*(?::?[-+?][^{}$]*)?\}$/;

/**
 * `device_ids` entries of an NVIDIA request that hold `{` or `}` (and no `$`): Compose interpolates only
 * `$NAME`/`${NAME}` (compose-go template.go), so the text reaches the NVIDIA Container Toolkit as
 * written, and no form of a GPU id it accepts (index, `GPU-`/`MIG-` UUID, PCI bus id, `N:M`, `all`, or a
 * CDI name) holds a brace: the container does not start ('unknown device').
 */
function checkDeviceIds(ctx: ManifestRuleContext, d: YAMLMap, ids: Pair, who: string): void {
  const driver = valueOf(d, "driver");
  if (!isScalar(driver) || String(driver.value).trim() !== "nvidia" || !isSeq(ids.value)) return;
  for (const item of ids.value.items) {
    if (!isScalar(item) || typeof item.value !== "string") continue;
    const text = item.value.trim();
    // `{{ x }}`: a Jinja or Go template that fills the file in before Compose reads it.
    if (templated(text) || !/[{}]/.test(text) || text.includes("{{")) continue;
    const braced = BRACED_WITHOUT_DOLLAR.test(text);
    const src = ctx.manifest.src;
    const start = item.range?.[0] ?? 0;
    const at = src.text.indexOf("{", start);
    ctx.report({
      range: src.range(start, contentEnd(item)),
      message: `device_ids entry "${text}" in ${who} is no GPU id${braced ? `: it looks like an interpolation without its $, and Compose interpolates only $NAME and \${NAME}` : ""}; Compose passes it as written and the NVIDIA Container Toolkit refuses it (unknown device), so the container does not start${braced ? `; write $${text}` : ""}`,
      ...(braced && at >= 0 && at < contentEnd(item)
        ? { fix: { title: `Write $${text}`, edits: [{ range: src.range(at, at), newText: "$" }], safe: true } }
        : {}),
    });
  }
}

/** Whether a `capabilities` value asks for GPUs (`[gpu]`, `[gpu, utility]`, ...). */
function requestsGpus(v: Node | null): boolean {
  return isSeq(v) && v.items.some((i) => isScalar(i) && String(i.value).toLowerCase() === "gpu");
}

function checkDevice(ctx: ManifestRuleContext, s: ComposeService, d: YAMLMap): void {
  const src = ctx.manifest.src;
  const rangeOfPair = (p: Pair) => src.range(pairStart(p), contentEnd(p));
  const who = `a GPU reservation of service "${s.name}"`;
  const count = pairOf(d, "count");
  const ids = pairOf(d, "device_ids");
  const caps = pairOf(d, "capabilities");

  if (count && ids) {
    const edits = removePair(src, d, count);
    ctx.report({
      range: rangeOfPair(count),
      message: `count and device_ids are both set in ${who}: they are exclusive, and docker compose refuses the file; keep device_ids (these GPUs) or count (any that many)`,
      related: [{ range: rangeOfPair(ids), message: "device_ids" }],
      ...(edits ? { fix: { title: "Keep device_ids, remove count", edits, safe: false } } : {}),
    });
  }

  const capsValue = caps?.value as Node | null | undefined;
  const capsEmpty =
    !caps ||
    capsValue === null ||
    capsValue === undefined ||
    (isScalar(capsValue) && capsValue.value === null) ||
    (isSeq(capsValue) && capsValue.items.length === 0);
  if (capsEmpty) {
    let edits: TextEdit[] | null;
    if (!caps) edits = insertPairs(src, d, ["capabilities: [gpu]"], "capabilities: [gpu]");
    else if (capsValue && capsValue.range)
      edits = replaceNode(src, capsValue, capsValue.range[0] === capsValue.range[1] ? " [gpu]" : "[gpu]");
    else edits = null;
    const first = d.items[0] as Pair | undefined;
    ctx.report({
      range: caps
        ? rangeOfPair(caps)
        : first
          ? src.range(pairStart(first), contentEnd(first))
          : src.range(d.range?.[0] ?? 0, d.range?.[1] ?? 0),
      message: `${who} has no capabilities: Compose requires them (capabilities: [gpu] for NVIDIA GPUs) and fails to deploy the service without them`,
      ...(edits ? { fix: { title: "Add capabilities: [gpu]", edits, safe: true } } : {}),
    });
  }

  // A service that also names the NVIDIA runtime gets its GPUs from the image's NVIDIA_VISIBLE_DEVICES
  // through that runtime; how the empty request combines with it is not documented: stay silent.
  const runtime = valueAt(s.node, ["runtime"]);
  const nvidiaRuntime = isScalar(runtime) && String(runtime.value).trim() === "nvidia";
  if (!count && !ids && !capsEmpty && !nvidiaRuntime && requestsGpus(caps!.value as Node | null)) {
    const edits = insertPairs(src, d, ["count: all"], "count: all");
    const first = d.items[0] as Pair;
    ctx.report({
      range: rangeOfPair(first),
      severity: "warning",
      message: `${who} sets neither count nor device_ids: since Docker Engine 27.3 such a request gives the container no GPU (NVIDIA_VISIBLE_DEVICES=void; moby/moby#48483), although the Compose documentation still says all GPUs; write count: all, or device_ids`,
      ...(edits ? { fix: { title: "Add count: all", edits, safe: true } } : {}),
    });
  }

  if (ids) checkDeviceIds(ctx, d, ids, who);

  const countValue = count?.value;
  if (count && isScalar(countValue) && typeof countValue.value === "number" && !Number.isInteger(countValue.value)) {
    ctx.report({
      range: rangeOfPair(count),
      message: `count: ${countValue.source ?? countValue.value} in ${who} is not a whole number of GPUs, so docker compose refuses it`,
    });
  }
  if (count && isScalar(countValue) && typeof countValue.value === "string") {
    const text = countValue.value.trim();
    if (text.toLowerCase() === "all" || templated(text)) return;
    if (/^\d+$/.test(text)) {
      // The digits themselves, leading zeros dropped: Number() would round a count beyond 2^53.
      const digits = text.replace(/^0+(?=\d)/, "");
      ctx.report({
        range: rangeOfPair(count),
        severity: "information",
        message: `count: "${countValue.value}" in ${who} is a string: Compose documents count as an integer or all; write count: ${digits}`,
        fix: { title: `Write count: ${digits}`, edits: replaceNode(src, countValue, digits), safe: true },
      });
      return;
    }
    ctx.report({
      range: rangeOfPair(count),
      message: `count: "${countValue.value}" in ${who} is neither a number nor all, so docker compose refuses it${text.includes(",") ? "; to pick GPUs by id use device_ids" : ""}`,
    });
  }
}
