import type { PythonRule, RuleContext } from "../rule";
import { snippet } from "../rule";
import type { EnvWriteEvent } from "../python/events";
import { nodeRange } from "../python/events";
import { stateBefore } from "../python/timeline";
import type { Fix } from "../types";
import { scriptNameOf, type VisibleLaunch } from "../slurmLaunch";
import { mayKeepSetValue, overwrites } from "./shared/visibleWrites";

/** A CUDA_VISIBLE_DEVICES value as a comparable list: `0, 1` and `0,1` are the same. */
const ids = (v: string): string =>
  v
    .split(",")
    .map((x) => x.trim())
    .join(",");

/**
 * `os.environ["CUDA_VISIBLE_DEVICES"] = "0"` → `os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")`:
 * the write keeps a value the process was started with. Only for a plain subscript assignment.
 */
function setdefaultFix(w: EnvWriteEvent): Fix | null {
  const assignment = w.statement?.type === "expression_statement" ? w.statement.namedChildren[0] : null;
  const left = assignment?.type === "assignment" ? assignment.childForFieldName("left") : null;
  const right = assignment?.childForFieldName("right");
  const environ = left?.type === "subscript" ? left.childForFieldName("value") : null;
  const key = left?.childForFieldName("subscript");
  if (!assignment || !environ || !key || !right) return null;
  return {
    title: "Keep a CUDA_VISIBLE_DEVICES the process was started with (os.environ.setdefault)",
    safe: false,
    edits: [{ range: nodeRange(assignment), newText: `${environ.text}.setdefault(${key.text}, ${right.text})` }],
  };
}

/**
 * Whether another CUDA_VISIBLE_DEVICES write or removal follows `w` on the file's timeline before
 * CUDA initialises (`os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu` after a default of `"0"`, or a
 * second literal): that one, not `w`, decides what the process uses, so `w`'s value says nothing of
 * the GPU a run gets. A `setdefault` after `w` changes nothing (the variable is set by then).
 */
function decidedLater(ctx: RuleContext, w: EnvWriteEvent): boolean {
  const events = ctx.model.events;
  const at = events.indexOf(w);
  return events
    .slice(at + 1)
    .some(
      (e) =>
        ((e.kind === "envWrite" && e.form !== "setdefault") || e.kind === "envDelete") &&
        e.variable === "CUDA_VISIBLE_DEVICES" &&
        !stateBefore(ctx.model, e).frozenBy,
    );
}

/** The first launch whose value differs from the literal the file writes, or null. */
function differingLaunch(ctx: RuleContext, w: EnvWriteEvent): VisibleLaunch | null {
  return (ctx.visibleLaunches ?? []).find((l) => ids(l.value) !== ids(w.literal ?? "")) ?? null;
}

/** GPU064: a Python file overwrites the CUDA_VISIBLE_DEVICES that a project script starts it with. */
export const rule: PythonRule = {
  meta: {
    code: "GPU064",
    name: "launch-visible-devices-overwritten",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    // A CUDA_VISIBLE_DEVICES write; runs only when a project script starts the file with the variable set.
    trigger: (t) => t.envWith(["CUDA_VISIBLE_DEVICES"]),
    needs: "visibleLaunch",
    docs: {
      what: 'Reports a literal write of CUDA_VISIBLE_DEVICES that a Python file makes whenever it runs (`os.environ["CUDA_VISIBLE_DEVICES"] = "0"` at its top or in its `__main__` block) when a shell or job script of the project starts that file with another value (`CUDA_VISIBLE_DEVICES=1 python inference.py`, or after `export CUDA_VISIBLE_DEVICES=1`): the write replaces the caller\'s choice, so every such run uses the file\'s GPU.',
      follows:
        "The file's CUDA_VISIBLE_DEVICES writes on the path it runs when started (module level, the body of the `if __name__ == \"__main__\":` block, and the functions, constructors and methods it calls, as GPU001 follows them), outside any other `if`, `try`, `with` or loop, with a literal value, made before anything initialised CUDA (after that the write has no effect: GPU001); the project's shell and job scripts found as for GPU036 (beside the file, in its parent folders up to the repository root, three levels at most, and their direct subfolders), their commands that start the file (`python file.py`, `torchrun`, `srun`, ...), and the literal CUDA_VISIBLE_DEVICES each command gets: an inline prefix, else the script's last `export` before it. A command counts only where its path, taken from the folder the script's `cd` commands move to, names this file and no other file of the project (`python main.py` in exp/run.sh with both exp/main.py and main.py present may start either, depending on where the script is started; a `cd` to a folder held in a variable cannot be followed). Silent where every such command gives the file the value it writes (`0, 1` and `0,1` alike), for `os.environ.setdefault(...)`, an empty or `-1` value (GPU003's), a value that is not a literal (an option's value: the script may pass the same ids), and where the file reads CUDA_VISIBLE_DEVICES before its write or tests it with `in` (it may keep the caller's value on a path the model does not follow), and for a write that another CUDA_VISIBLE_DEVICES write or removal follows before CUDA initialises (`os.environ[\"CUDA_VISIBLE_DEVICES\"] = args.gpu` after a default of `\"0\"`: the later one decides the GPU). Not followed: values the caller's own environment holds (a variable exported in the user's shell), commands in Markdown documents, scripts that start the file through another script, and modules the file imports. GPU063 reports the same write under a Slurm job's GPUs.",
      why: 'A process gets CUDA_VISIBLE_DEVICES from whoever starts it, and CUDA reads it once, when it initialises; an assignment to `os.environ` before that replaces the inherited value ("putenv() will be called automatically when the mapping is modified", Python os.environ). A script that starts the file with `CUDA_VISIBLE_DEVICES=1` to put a second run on the second GPU then gets the GPU the file names: two runs meant for GPUs 0 and 1 both land on GPU 0 (ZFTurbo/MVSEP-MDX23-music-separation-model#44: the inference script\'s first lines wrote `"0"`; the proposed patch writes it only when the variable is not set).',
      example:
        '# inference.py, started by separate_both.sh: `CUDA_VISIBLE_DEVICES=1 python inference.py ...`\nimport os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"  # GPU064: replaces the 1 the script chose\nimport torch\n',
      fix: '# inference.py, started by separate_both.sh: `CUDA_VISIBLE_DEVICES=1 python inference.py ...`\nimport os\n\nos.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")  # a value the caller set is kept\nimport torch\n',
      whenNotToCare:
        'When the script that sets the other value is obsolete, or the file\'s value is meant to win (then drop the value from the script: it misleads). Measured on public code (2026-12-07): 654 code bases (88,606 Python files; research repositories with shell scripts, and the 37 code bases of the ecosystem corpus, which have none): 1 finding, true (a file that writes `"0"` at its top while its script exports `CUDA_VISIBLE_DEVICES=3` before starting it); 22 of the code bases both write a literal value in Python and set one in a script, and in the other 21 the script starts another file or gives the same value. Three false findings constructed by hand were fixed before (a script that starts a file of the same name in another folder, a `cd` the model cannot follow, a later write that replaces the reported one). The quick fix (`os.environ.setdefault`) is not marked safe: a run started from a shell that exports CUDA_VISIBLE_DEVICES for other reasons then keeps that value too.',
      references: [
        'Python, os.environ: "putenv() will be called automatically when the mapping is modified"; os.environ.setdefault leaves a set value alone (https://docs.python.org/3/library/os.html#os.environ)',
        "CUDA C Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES is read at CUDA initialisation; ground-truth.md: a value written before `import torch` takes effect",
        'ZFTurbo/MVSEP-MDX23-music-separation-model#44 (2024-11-17): inference.py wrote CUDA_VISIBLE_DEVICES="0" in its first lines, so runs started with CUDA_VISIBLE_DEVICES=0 and =1 both used the first GPU',
      ],
    },
  },
  check(ctx) {
    const writes = overwrites(ctx).filter((w) => w.literal !== null && w.form === "subscript");
    if (!writes.length || mayKeepSetValue(ctx, writes, ["CUDA_VISIBLE_DEVICES"])) return;
    for (const w of writes) {
      const launch = differingLaunch(ctx, w);
      // After CUDA initialised the write has no effect (GPU001 reports it).
      if (!launch || stateBefore(ctx.model, w).frozenBy || decidedLater(ctx, w)) continue;
      ctx.report({
        range: w.range,
        message: `${snippet(w.statement ?? w.value!)} replaces the CUDA_VISIBLE_DEVICES="${launch.value}" that ${scriptNameOf(launch)}:${launch.line + 1} starts this file with (${launch.from}): every run then uses GPU ${w.literal}, not the GPU${launch.value.includes(",") ? "s" : ""} the script chose; keep a value the process was started with (os.environ.setdefault), or drop one of the two`,
        related: [
          {
            file: launch.script,
            range: { start: { line: launch.line, character: 0 }, end: { line: launch.line, character: 0 } },
            message: `${scriptNameOf(launch)}:${launch.line + 1} starts this file with CUDA_VISIBLE_DEVICES="${launch.value}"`,
          },
        ],
        fix: setdefaultFix(w) ?? undefined,
      });
    }
  },
};
