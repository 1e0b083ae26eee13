import type { PythonRule, RuleContext } from "../rule";
import type { EnvWriteEvent } from "../python/events";
import { envWritesAnywhere } from "../python/model";
import { enclosingFunction, type SyntaxNode } from "../python/parser";

/**
 * Counts of the GPUs this process sees that do not initialise CUDA (ground-truth.md:
 * `torch.cuda.device_count(...)` and `torch.accelerator.device_count(...)` are lazy), so that a
 * CUDA_VISIBLE_DEVICES written after them still takes effect. Counts that initialise the runtime
 * (`jax.devices()`, TensorFlow's device lists, CuPy) make a later write ineffective instead: GPU001
 * and GPU012 report that.
 */
const LAZY_COUNTS: ReadonlySet<string> = new Set(["torch.cuda.device_count", "torch.accelerator.device_count"]);

/** How deep names are followed back to their assignments (`ids` ← `gpu_list` ← `gpu_id` ← the count). */
const MAX_DEPTH = 4;

/** A count call that the value of `node` takes from, following names to their assignments in the same scope; null when none. */
function countIn(
  ctx: RuleContext,
  node: SyntaxNode,
  before: number,
  scope: SyntaxNode | null,
  depth = 0,
): SyntaxNode | null {
  for (const call of [node, ...node.descendantsOfType("call")]) {
    if (call?.type !== "call") continue;
    const path = ctx.model.resolve(call.childForFieldName("function"));
    if (path && LAZY_COUNTS.has(path)) return call;
  }
  if (depth >= MAX_DEPTH) return null;
  const names = new Set(
    [node, ...node.descendantsOfType("identifier")]
      .filter((n): n is SyntaxNode => n?.type === "identifier")
      .map((n) => n.text),
  );
  for (const a of assignmentsOf(ctx, names, before, scope)) {
    const found = countIn(ctx, a.value, a.start, scope, depth + 1);
    if (found) return found;
  }
  return null;
}

/** The right-hand sides of `name = ...` in `scope` (the same function, or module level) written before `before`. */
function assignmentsOf(
  ctx: RuleContext,
  names: ReadonlySet<string>,
  before: number,
  scope: SyntaxNode | null,
): Array<{ value: SyntaxNode; start: number }> {
  const out: Array<{ value: SyntaxNode; start: number }> = [];
  for (const a of ctx.model.nodesMentioning("assignment", [...names], true)) {
    if (a.startIndex >= before) continue;
    const left = a.childForFieldName("left");
    const value = a.childForFieldName("right");
    if (left?.type !== "identifier" || !value || !names.has(left.text)) continue;
    if ((enclosingFunction(a)?.id ?? null) !== (scope?.id ?? null)) continue;
    out.push({ value, start: a.startIndex });
  }
  return out;
}

/**
 * Whether the write is guarded by a test of the variable (`if "CUDA_VISIBLE_DEVICES" not in
 * os.environ:`, `if os.environ.get("CUDA_VISIBLE_DEVICES") is None:`), or its function reads the
 * variable anywhere (it may map ordinals through the inherited list): then it is left alone.
 */
function guardedOrMapped(w: EnvWriteEvent, scope: SyntaxNode | null, ctx: RuleContext): boolean {
  for (let n = w.statement?.parent ?? null; n && n.id !== scope?.id; n = n.parent) {
    const condition =
      n.type === "if_statement" || n.type === "elif_clause" || n.type === "while_statement"
        ? n.childForFieldName("condition")
        : null;
    if (condition?.text.includes(w.variable)) return true;
  }
  // A function's own reads; for a module-level write, reads anywhere in the module.
  return ctx.model
    .nodesMentioning(["subscript", "call"], [w.variable])
    .some(
      (n) =>
        n.text.includes(w.variable) &&
        n.namedChildren.length > 0 &&
        !n.namedChildren.some((c) => c?.type === "block") &&
        (!scope || (n.startIndex >= scope.startIndex && n.endIndex <= scope.endIndex)) &&
        !(w.statement && n.startIndex >= w.statement.startIndex && n.endIndex <= w.statement.endIndex) &&
        !isWriteTarget(n),
    );
}

/** Whether `n` is the target of an assignment (`os.environ[K] = ...`), not a read. */
function isWriteTarget(n: SyntaxNode): boolean {
  return n.parent?.type === "assignment" && n.parent.childForFieldName("left")?.id === n.id;
}

/** GPU057: CUDA_VISIBLE_DEVICES written from GPU ordinals counted in the process (`range(torch.cuda.device_count())`). */
export const rule: PythonRule = {
  meta: {
    code: "GPU057",
    name: "visible-devices-from-counted-ordinals",
    severity: "warning",
    fixable: false,
    // Not measured yet: the ecosystem corpus holds no such write.
    preview: true,
    // A CUDA_VISIBLE_DEVICES write whose value comes from device_count().
    trigger: (t) => t.has("CUDA_VISIBLE_DEVICES") && t.has("device_count"),
    docs: {
      what: 'Finds `CUDA_VISIBLE_DEVICES` written from GPU ordinals this process counted: `os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(torch.cuda.device_count()))`, also through names assigned before the write in the same function (`ids = ...; gpu_list = sorted(...ids...)`), and from `torch.accelerator.device_count()`.',
      follows:
        'Every write of the variable in the file (functions and methods included) and, back from its value, the names it uses to their assignments in the same function (or at module level) before the write, a few assignments deep, whichever branch they sit in. Silent for `os.environ.setdefault(...)` (it writes only where nothing was inherited), where the write sits under a test of the variable (`if "CUDA_VISIBLE_DEVICES" not in os.environ:`, `if os.environ.get(...) is None:`), where the same function (or the module, for a top-level write) reads the variable (it may map the ordinals through the inherited list), and for counts that initialise the runtime (`jax.devices()`, TensorFlow\'s device lists, CuPy: the write then comes too late, GPU001 and GPU012). Not followed: function parameters, attributes, other modules.',
      why: "`torch.cuda.device_count()` counts the GPUs the process already sees, and they are numbered from 0 in that view; `CUDA_VISIBLE_DEVICES` takes the machine's own device ids (CUDA C Programming Guide, CUDA Environment Variables: the listed devices are made visible and renumbered from 0). When the process inherited a list (a Slurm job given GPUs 4-7 without device cgroups, a launcher, `CUDA_VISIBLE_DEVICES=4,5,6,7 python ...`), it counts 4 and writes `0,1,2,3`: since `device_count()` does not initialise CUDA (ground-truth.md: lazy), the write takes effect, and the process moves onto GPUs 0-3, which belong to other jobs or users (IsoNet-cryoET/IsoNet2#28: training on other jobs' GPUs of a shared Slurm node). Where nothing was inherited the write changes nothing. Either way it is at best useless.",
      example:
        'import os\nimport torch\n\ngpus = ",".join(str(i) for i in range(torch.cuda.device_count()))\nos.environ["CUDA_VISIBLE_DEVICES"] = gpus  # GPU057: ordinals written as device ids\n',
      fix: "import os\nimport torch\n\nnum_gpus = torch.cuda.device_count()  # every GPU this process may use; CUDA_VISIBLE_DEVICES left as inherited\n",
      whenNotToCare:
        "A program that only ever runs where no CUDA_VISIBLE_DEVICES is set beforehand (no scheduler, no launcher that sets it, nobody who narrows it in the shell): there the write changes nothing. It still does nothing useful, so removing it is safe.",
      references: [
        "CUDA C Programming Guide, CUDA Environment Variables: CUDA_VISIBLE_DEVICES lists the device ids that are visible, and they are renumbered from 0 in the process",
        "ground-truth.md: `torch.cuda.device_count(...)` and `torch.accelerator.device_count(...)` are lazy (they do not initialise CUDA), so a CUDA_VISIBLE_DEVICES written after them takes effect",
        "Slurm, Generic Resource Scheduling: for a job given GPUs, CUDA_VISIBLE_DEVICES holds the allocated GPUs' ids; without device cgroups (ConstrainDevices) the other GPUs of the node stay reachable",
        "IsoNet-cryoET/IsoNet2#28 (2026-04-07): with no GPU option, the tool listed range(torch.cuda.device_count()) and wrote it back into CUDA_VISIBLE_DEVICES, moving a Slurm job onto other jobs' GPUs",
      ],
    },
  },
  check(ctx) {
    for (const w of envWritesAnywhere(ctx.model)) {
      // setdefault writes only where nothing was inherited: there the ordinals are the device ids.
      if (w.variable !== "CUDA_VISIBLE_DEVICES" || !w.value || !w.statement || w.form === "setdefault") continue;
      const scope = enclosingFunction(w.statement);
      const count = countIn(ctx, w.value, w.statement.startIndex, scope);
      if (!count || guardedOrMapped(w, scope, ctx)) continue;
      const where = ctx.where(count.startPosition.row);
      ctx.report({
        range: w.range,
        message: `CUDA_VISIBLE_DEVICES is written from GPU ordinals this process counted (${count.text} on ${where}): they number the GPUs it already sees from 0, while the variable takes the machine's device ids, so under an inherited CUDA_VISIBLE_DEVICES (a Slurm job's 4,5,6,7, a launcher's, the shell's) this write moves the process onto GPUs 0, 1, ... of other jobs; with none inherited it changes nothing. Leave the variable as it is and use torch.cuda.device_count() for the count`,
      });
    }
  },
};
