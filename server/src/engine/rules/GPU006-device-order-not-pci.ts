import { stateBefore } from "../python/timeline";
import type { PythonRule } from "../rule";
import type { ModuleModel } from "../python/model";
import type { EnvWriteEvent } from "../python/events";
import { envWritesAnywhere } from "../python/model";
import type { SyntaxNode } from "../python/parser";
import { parseVisibleDevices } from "../visibleDevices";
import { insertAbove, walk } from "./shared/py";

/** GPU006: numeric CUDA_VISIBLE_DEVICES ids without CUDA_DEVICE_ORDER="PCI_BUS_ID". */
export const rule: PythonRule = {
  meta: {
    code: "GPU006",
    name: "device-order-not-pci",
    severity: "information",
    fixable: true,
    fixSafety: "both",
    preview: true,
    // A CUDA_VISIBLE_DEVICES write, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(["CUDA_VISIBLE_DEVICES"]),
    docs: {
      what: 'Finds numeric CUDA_VISIBLE_DEVICES ids (`"1"`, `"0,2"`, `str(args.gpu)`) written when the file does not set `CUDA_DEVICE_ORDER="PCI_BUS_ID"` before them (or next to them, before CUDA starts).',
      follows:
        "Every CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER write in the file (functions, methods and notebook `%env` lines included), taken in the order the module runs them (its top level, with the functions it calls inlined) when both are on that path, else in source order. Not followed: CUDA_DEVICE_ORDER set outside the file (the shell, a launcher, the system environment, another module).",
      why: 'The ids in CUDA_VISIBLE_DEVICES are CUDA\'s own device numbers, and by default CUDA numbers GPUs fastest first, while nvidia-smi numbers them by PCI bus (ground-truth.md: nvidia-smi ignores the variable and numbers GPUs in PCI bus order). On a machine with mixed GPU models, `CUDA_VISIBLE_DEVICES="1"` can then be a different board than the one nvidia-smi, GPU Pilot\'s GPU view or a colleague calls GPU 1. `CUDA_DEVICE_ORDER="PCI_BUS_ID"` makes both agree. On identical GPUs the orders coincide, which is why this is only information.',
      example:
        'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # GPU006: 1 in CUDA\'s fastest-first order\nimport torch\n',
      fix: 'import os\n\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # the GPU nvidia-smi calls 1\nimport torch\n',
      whenNotToCare:
        "On machines whose GPUs are all the same model (fastest-first then equals PCI order), or when the ids come from a scheduler that already uses CUDA's order. GPU UUIDs (`GPU-...`) name a board unambiguously and are never reported.",
      references: [
        "ground-truth.md: 'Other facts measured' row nvidia-smi under CUDA_VISIBLE_DEVICES=1 (lists both GPUs, numbers them in PCI bus order)",
        "ground-truth.md: row `CUDA_DEVICE_ORDER` + `CUDA_VISIBLE_DEVICES` both set after `import torch` (both read at CUDA initialisation)",
        "CUDA C Programming Guide, CUDA Environment Variables: CUDA_DEVICE_ORDER (FASTEST_FIRST by default, PCI_BUS_ID)",
      ],
    },
  },
  check(ctx) {
    const writes = envWritesAnywhere(ctx.model);
    const orders = writes.filter((w) => w.variable === "CUDA_DEVICE_ORDER");
    for (const w of writes) {
      if (w.variable !== "CUDA_VISIBLE_DEVICES" || w.form === "putenv" || !isNumeric(w)) continue;
      if (orders.some((o) => orderCovers(ctx.model, o, w))) continue;
      // On the timeline: a write after CUDA initialised has no effect at all (GPU001 says so), and
      // its order is moot; after a framework import, the inserted order line would itself be a
      // late write (GPU002), so the fix is offered but not safe (applied on its own it would
      // create a GPU002 finding).
      const onTimeline = ctx.model.events.includes(w);
      const state = onTimeline ? stateBefore(ctx.model, w) : null;
      if (state?.frozenBy) continue;
      const safe = onTimeline && !state!.firstImport && !w.inFunction;
      const environ = w.statement ? environText(ctx.model, w.statement) : null;
      const line = environ ? `${environ}["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"` : null;
      ctx.report({
        range: w.range,
        message: `CUDA_VISIBLE_DEVICES${w.literal !== null ? `="${w.literal}"` : ""} selects GPUs by CUDA's default fastest-first numbering, which can differ from nvidia-smi's PCI bus order; set CUDA_DEVICE_ORDER="PCI_BUS_ID" before it so the ids mean what nvidia-smi shows`,
        ...(line && w.statement
          ? {
              fix: {
                title: 'Insert CUDA_DEVICE_ORDER="PCI_BUS_ID" above',
                edits: [insertAbove(ctx.model, w.statement, line)],
                safe,
              },
            }
          : {}),
      });
    }
  },
};

/** Whether the write selects GPUs by number: a literal of indices, or `str(...)` / `",".join(...)` of something. */
function isNumeric(w: EnvWriteEvent): boolean {
  if (w.literal !== null) {
    const parsed = parseVisibleDevices(w.literal);
    return !parsed.hidesAll && parsed.kept.length > 0 && parsed.kept.every((e) => e.kind === "index");
  }
  const v = w.value;
  if (v?.type !== "call") return false;
  const fn = v.childForFieldName("function");
  if (fn?.type === "identifier" && fn.text === "str") return true;
  return (
    fn?.type === "attribute" &&
    fn.childForFieldName("attribute")?.text === "join" &&
    fn.childForFieldName("object")?.type === "string"
  );
}

/**
 * Whether a CUDA_DEVICE_ORDER write `o` (any explicit value: a deliberate choice) applies to the
 * CUDA_VISIBLE_DEVICES write `w`: it runs before it, or right after it with no CUDA initialisation
 * in between (both variables are read when CUDA starts).
 */
function orderCovers(model: ModuleModel, o: EnvWriteEvent, w: EnvWriteEvent): boolean {
  const io = model.events.indexOf(o);
  const iw = model.events.indexOf(w);
  if (io >= 0 && iw >= 0) {
    if (io < iw) return true;
    return !model.events.slice(iw, io).some((e) => e.kind === "init");
  }
  return (
    o.range.start.line < w.range.start.line ||
    (o.range.start.line === w.range.start.line && o.range.start.character < w.range.start.character)
  );
}

/** The source text of the `os.environ` expression used by a write statement (`os.environ`, `environ`, `env`). */
function environText(model: ModuleModel, stmt: SyntaxNode): string | null {
  let found: string | null = null;
  walk(stmt, (n) => {
    if (found) return false;
    if ((n.type === "attribute" || n.type === "identifier") && model.isEnviron(n)) {
      found = n.text;
      return false;
    }
    return true;
  });
  return found;
}
