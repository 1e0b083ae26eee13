import type { PythonRule } from "../rule";
import { envWrites } from "../rule";
import { nodeRange } from "../python/events";
import type { ImportEvent } from "../python/events";

/**
 * GPU032: Apple and Intel device variables that are read too early or read differently than written:
 * `PYTORCH_ENABLE_MPS_FALLBACK` written after `import torch`; `ZE_AFFINITY_MASK` in the
 * `card.tile` form while the Level Zero hierarchy is FLAT (the default).
 */
export const rule: PythonRule = {
  meta: {
    code: "GPU032",
    name: "mps-xpu-variable-ignored",
    severity: "warning",
    fixable: false,
    // The MPS fallback or the Level Zero mask, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(["PYTORCH_ENABLE_MPS_FALLBACK", "ZE_AFFINITY_MASK"]),
    docs: {
      what: 'Finds `PYTORCH_ENABLE_MPS_FALLBACK` written after `import torch` in the same program; and (preview) `ZE_AFFINITY_MASK` values in the `card.tile` form (`"0.1"`) in a file that sets `ZE_FLAT_DEVICE_HIERARCHY=FLAT` or leaves it unset (FLAT is the default).',
      follows:
        "The module's code in the order it runs (top level, `if __name__ == \"__main__\":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module's own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep: each PYTORCH_ENABLE_MPS_FALLBACK write against the torch import before it, and the ZE_AFFINITY_MASK and ZE_FLAT_DEVICE_HIERARCHY writes on that path. Not followed: writes in functions the module never calls, torch imported by a project module, and variables set in the shell or a launcher (an unset ZE_FLAT_DEVICE_HIERARCHY counts as FLAT).",
      why: "`PYTORCH_ENABLE_MPS_FALLBACK=1` makes operators the MPS backend lacks run on the CPU (PyTorch documentation, 'MPS Environment Variables'). PyTorch reads it when it registers the MPS fallback, as `torch` loads, so it must be set before `import torch`; written afterwards, the first unsupported operator still raises NotImplementedError with the advice to set the variable. On Intel GPUs, Level Zero's `ZE_FLAT_DEVICE_HIERARCHY` decides what a device is: in FLAT mode, the default, each tile (stack) of a card is its own root device with no sub-devices, and in COMPOSITE mode a card is one device whose tiles are sub-devices (Intel, 'Flattening GPU Tile Hierarchy'; oneAPI GPU Optimization Guide, 'Exposing the Device Hierarchy'). `ZE_AFFINITY_MASK` is read in that model: the `card.tile` form names sub-devices, which FLAT devices do not have, so the mask does not select the tile meant; in FLAT mode, tiles are numbered as devices (`\"1\"` for the second tile). Documented, not measured here: there is no Apple or Intel GPU on the machine this project measures on.",
      example:
        'import os\nimport torch\n\nos.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"  # GPU032: torch already loaded\nx = torch.ones(3, device="mps")\n',
      fix: 'import os\n\nos.environ["PYTORCH_ENABLE_MPS_FALLBACK"] = "1"\nimport torch\n\nx = torch.ones(3, device="mps")\n',
      whenNotToCare:
        "When the variable is also set in the environment that starts the program (a shell profile, a launcher); on machines without Apple or Intel GPUs the variables are not read at all.",
      references: [
        "PyTorch documentation, MPS Environment Variables (docs.pytorch.org/docs/stable/mps_environment_variables.html): PYTORCH_ENABLE_MPS_FALLBACK: 'If set to 1, falls back to CPU when MPS ops aren't supported'",
        "Intel, Flattening GPU Tile Hierarchy (intel.com/content/www/us/en/developer/articles/technical/flattening-gpu-tile-hierarchy.html): ZE_FLAT_DEVICE_HIERARCHY and ZE_AFFINITY_MASK",
        "Intel oneAPI GPU Optimization Guide, Exposing the Device Hierarchy: 'The FLAT mode is the default mode if ZE_FLAT_DEVICE_HIERARCHY is not set. In FLAT mode, each stack is exposed as a root device.'",
      ],
    },
  },
  check(ctx) {
    const writes = envWrites(ctx.model);
    for (const w of writes) {
      if (w.variable !== "PYTORCH_ENABLE_MPS_FALLBACK" || w.form === "putenv") continue;
      const idx = ctx.model.events.indexOf(w);
      const torch = ctx.model.events
        .slice(0, idx)
        .find((e): e is ImportEvent => e.kind === "import" && e.framework === "torch");
      if (!torch) continue;
      ctx.report({
        range: w.range,
        message: `PYTORCH_ENABLE_MPS_FALLBACK is set after \`${torch.node.text.split("\n")[0]}\` (${ctx.where(torch.node.startPosition.row)}): PyTorch read it when torch loaded, so unsupported MPS operators still raise instead of falling back to the CPU; set it before importing torch (PyTorch documentation, MPS Environment Variables)`,
        related: [{ range: nodeRange(torch.node), message: "torch loaded here" }],
      });
    }
    const hierarchy = writes.filter((w) => w.variable === "ZE_FLAT_DEVICE_HIERARCHY");
    const modes = new Set(hierarchy.map((w) => w.literal?.trim().toUpperCase() ?? null));
    if (modes.has(null) || modes.size > 1 || (modes.size === 1 && !modes.has("FLAT"))) return;
    for (const w of writes) {
      if (w.variable !== "ZE_AFFINITY_MASK" || w.literal === null) continue;
      const tiles = w.literal
        .split(",")
        .map((s) => s.trim())
        .filter((s) => /^\d+\.\d+$/.test(s));
      if (tiles.length === 0) continue;
      ctx.report({
        range: w.range,
        preview: true,
        message: `ZE_AFFINITY_MASK="${w.literal}" uses the card.tile form (${tiles.join(", ")}), but the Level Zero hierarchy is FLAT (${hierarchy.length ? `set at ${ctx.where(hierarchy[0].range.start.line)}` : "the default when ZE_FLAT_DEVICE_HIERARCHY is unset"}): each tile is then a device of its own with no sub-devices (Intel documentation); number the tiles as devices, or set ZE_FLAT_DEVICE_HIERARCHY=COMPOSITE`,
      });
    }
  },
};
