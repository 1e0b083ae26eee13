import type { PythonRule } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { nodeRange } from "../python/events";
import { deviceUses } from "../python/devices";
import { fileVisibleDevices } from "./shared/fileVisible";

/** GPU004: a device ordinal at or beyond the number of devices the file's own CUDA_VISIBLE_DEVICES leaves visible. */
export const rule: PythonRule = {
  meta: {
    code: "GPU004",
    name: "ordinal-out-of-range",
    severity: "error",
    fixable: true,
    fixSafety: "unsafe",
    // Needs the file's own CUDA_VISIBLE_DEVICES write (TextProbe.envWith).
    trigger: (t) => t.envWith(["CUDA_VISIBLE_DEVICES"]),
    docs: {
      what: 'Finds `cuda:N`, `torch.device("cuda", N)`, `set_device(N)`, `.cuda(N)`, `device_ids=[...]`, a `device_map`\'s integer values (`device_map={"": N}`, `device_map=N`), `transformers.pipeline(device=N)` and `jax.devices()[N]` whose N is not below the number of ids that the same file put in CUDA_VISIBLE_DEVICES.',
      follows:
        "The CUDA_VISIBLE_DEVICES values written before CUDA initialises by the module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep, and literal device ordinals anywhere in the file, functions included. Not followed: ordinals held in variables or computed, writes in functions the module never calls, and CUDA_VISIBLE_DEVICES set outside the file (the shell, a launcher, another module).",
      why: 'CUDA renumbers the visible devices from 0. Measured on 2 x H200 (ground-truth.md, \'Other facts measured\'): with `CUDA_VISIBLE_DEVICES="1"`, `torch.cuda.set_device(1)` or `device="cuda:1"` raises `torch.AcceleratorError: CUDA error: invalid device ordinal`. The author usually meant physical GPU 1, which is now `cuda:0`.',
      example:
        'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n\ntorch.cuda.set_device(1)  # invalid device ordinal\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n\ntorch.cuda.set_device(0)  # physical GPU 1\n',
      whenNotToCare:
        'Never: the ordinal cannot exist in this process. Renumbering itself (`"5"` then `cuda:0`) is by design and never reported.',
      references: [
        "ground-truth.md: 'How CUDA parses CUDA_VISIBLE_DEVICES' row \"1\"; 'Other facts measured' row invalid device ordinal",
      ],
    },
  },
  check(ctx) {
    const seen = fileVisibleDevices(ctx.model);
    if (!seen) return;
    const { value, parsed, count: k, write } = seen;
    for (const use of deviceUses(ctx.model)) {
      if (use.ordinal < k) continue;
      const position = parsed.kept.findIndex((e) => e.kind === "index" && e.index === use.ordinal);
      // In a list of ids (`device_ids=[0, 1]`) that already names that ordinal, the new ordinal would
      // repeat it (`[0, 0]`): no fix there.
      const repeats = position >= 0 && listHolds(use.node, position);
      const visible = k === 1 ? "only cuda:0 exists" : `only cuda:0..cuda:${k - 1} exist`;
      ctx.report({
        range: nodeRange(use.node),
        message:
          `${use.form} names device ${use.ordinal}, but CUDA_VISIBLE_DEVICES="${value}" (${ctx.where(write.range.start.line)}) leaves ${k} GPU${k === 1 ? "" : "s"} visible: ${visible}, renumbered from 0 (invalid device ordinal)` +
          (position >= 0 ? `; physical GPU ${use.ordinal} is cuda:${position}` : ""),
        ...(position >= 0 && !repeats
          ? {
              fix: {
                title: `Use ordinal ${position} (physical GPU ${use.ordinal})`,
                edits: [{ range: nodeRange(use.node), newText: use.replace(position) }],
                safe: false,
              },
            }
          : {}),
      });
    }
  },
};

/** Whether `node` is an element of a list or tuple that also holds the integer `ordinal` as another element. */
function listHolds(node: SyntaxNode, ordinal: number): boolean {
  const list = node.parent;
  if (!list || (list.type !== "list" && list.type !== "tuple")) return false;
  return list.namedChildren.some((e) => !!e && e.id !== node.id && e.type === "integer" && Number(e.text) === ordinal);
}
