import type { ManifestRule, ManifestRuleContext } from "../rule";
import { expandsVariable, exportOperands, type ShellCommand } from "../manifests/shell";
import { parseLaunchLine } from "../launch/commandLine";
import { MISSPELLINGS, misspellingOf } from "./GPU007-misspelled-cuda-variable";

/** One place a shell script gives a variable a value or the export attribute: its name and the name's offsets. */
interface NameSite {
  name: string;
  start: number;
  end: number;
}

/**
 * The variables `c` sets or exports, each with where its name is written: a prefix or a bare
 * assignment (`NAME=v cmd`, `NAME=v`), the assignments of an `env`, `nohup` or `exec` prefix
 * (launch/commandLine.ts `parseLaunchLine`: `env -u X NAME=v cmd`), and the operands of `export` /
 * `declare -x` / `typeset -x` (`export NAME=v`, `export NAME`).
 */
function namesSet(c: ShellCommand): NameSite[] {
  const given = c.words.length
    ? [...parseLaunchLine(c.words, c.assignments).inlineEnv].map(([name, a]) => ({ name, word: a.word }))
    : c.assignments.map((a) => ({ name: a.name, word: a.word }));
  for (const w of exportOperands(c) ?? []) {
    if (w.value.startsWith("-")) continue;
    const eq = w.value.indexOf("=");
    given.push({ name: eq < 0 ? w.value : w.value.slice(0, eq), word: w });
  }
  const out: NameSite[] = [];
  for (const { name, word } of given) {
    const at = word.raw.indexOf(name);
    if (at >= 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      out.push({ name, start: word.start + at, end: word.start + at + name.length });
  }
  return out;
}

/** Reports each misspelled name of one command. */
function checkCommand(ctx: ManifestRuleContext, c: ShellCommand, commands: readonly ShellCommand[]): void {
  const src = ctx.manifest.src;
  for (const site of namesSet(c)) {
    if (site.name.length < MISSPELLINGS.minLength || site.name.length > MISSPELLINGS.maxLength) continue;
    const right = misspellingOf(site.name);
    if (!right || commands.some((o) => expandsVariable(o, site.name))) continue;
    ctx.report({
      range: src.range(site.start, site.end),
      message: `${site.name} is not a variable that CUDA or the frameworks read: did you mean ${right}? As written, the program gets a variable nobody reads${right === "CUDA_VISIBLE_DEVICES" ? ", and sees the GPUs the caller's CUDA_VISIBLE_DEVICES leaves (every GPU when it has none)" : ""}`,
      fix: {
        title: `Rename to ${right}`,
        safe: false,
        edits: [{ range: src.range(site.start, site.end), newText: right }],
      },
    });
  }
}

/** GPU055: a shell script sets a variable a typo away from a CUDA startup variable. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU055",
    name: "shell-misspelled-variable",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // Shell scripts only: never a YAML manifest.
    trigger: () => false,
    docs: {
      what: 'In a shell script (a Slurm job script too), finds a variable set for the programs it starts whose name is a typo away from a startup variable, as GPU007 judges names in Python: `CUDA_VISIBLE_DEVICE="6" accelerate launch ...`, `export CUDA_VISIBLE_DEVICE=0`, `CUDA_AVAILABLE_DEVICES=1 python train.py`, `export PYTORCH_CUDA_ALLOC_CNOF=...`, a name cut short (`CUDA_VISIBLE=0 python tools/train.py`). Real variables near them (`CUDA_HOME`, `CUDA_LAUNCH_BLOCKING`, `NCCL_*`, `HIP_VISIBLE_DEVICES`, ...) are never reported.',
      follows:
        "Every command of the script: `NAME=value` before a command or alone, `env NAME=value cmd` (also after `nohup` or `exec`), and the names `export`, `declare -x` and `typeset -x` take (with or without a value). A name the script reads back (`$NAME`, `${NAME}`) is the script's own variable and is not reported. Not followed: names built at run time, and scripts this one sources or runs.",
      why: "Environment variable names are exact and case-sensitive, and nothing warns about a name no one reads: with `CUDA_VISIBLE_DEVICE=6` (no final S), CUDA sees no CUDA_VISIBLE_DEVICES, so every GPU stays visible (ground-truth.md: with the variable unset, both GPUs were visible) while the author believes the job is confined to GPU 6 (huggingface/accelerate#717: all eight GPUs were used).",
      example: '#!/bin/bash\nCUDA_VISIBLE_DEVICE="6" accelerate launch train.py   # GPU055: nothing reads this name\n',
      fix: '#!/bin/bash\nCUDA_VISIBLE_DEVICES="6" accelerate launch train.py\n',
      whenNotToCare:
        "When the name is a variable of your own that a program you start reads (rename it away from the CUDA namespace, or silence the line with `# noqa: GPU055`). The fix (not applied by fix-all: it changes which GPUs the program sees) renames the variable where it is set.",
      references: [
        "rules.md: the startup variables (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, PYTORCH_CUDA_ALLOC_CONF, XLA_*, TF_*)",
        "ground-truth.md: each case started with CUDA_VISIBLE_DEVICES unset, and both GPUs were visible",
        "CUDA C Programming Guide, CUDA Environment Variables",
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const facts = ctx.manifest.jobscript;
    if (ctx.manifest.kind !== "jobscript" || !facts) return;
    for (const c of facts.commands) checkCommand(ctx, c, facts.commands);
  },
};
