import type { PythonRule, RuleContext } from "../rule";
import type { SlurmLaunch } from "../slurmLaunch";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { nodeRange } from "../python/events";

const LAUNCH_DOC =
  'PyTorch, torch.distributed.launch (torch/distributed/launch.py docstring, https://pytorch.org/docs/stable/distributed.html#launch-utility), "Changed in version 2.0.0: The launcher will passes the ``--local-rank=<rank>`` argument to your script. From PyTorch 2.0.0 onwards, the dashed ``--local-rank`` is preferred over the previously used underscored ``--local_rank``. For backward compatibility, it may be necessary for users to handle both cases in their argument parsing code. This means including both ``"--local-rank"`` and ``"--local_rank"`` in the argument parser. If only ``"--local_rank"`` is provided, the launcher will trigger an error: "error: unrecognized arguments: --local-rank=<rank>"."';
const USE_ENV_DOC =
  'PyTorch, torch/distributed/run.py `get_use_env`: "``use_env`` is a legacy argument ... ``use_env`` is only used by the ``torch.distributed.launch``"; with `--use-env` (or under torchrun) the local rank is only in the LOCAL_RANK environment variable';

/** The positional string arguments of an `add_argument(...)` call (its option strings), with their nodes. */
function optionStrings(call: SyntaxNode): Array<{ value: string; node: SyntaxNode }> {
  const out: Array<{ value: string; node: SyntaxNode }> = [];
  for (const a of call.childForFieldName("arguments")?.namedChildren ?? []) {
    if (!a || a.type === "keyword_argument") continue;
    const v = stringValue(a);
    if (v !== null) out.push({ value: v, node: a });
  }
  return out;
}

/** The method name of a call `x.name(...)`, or null. */
function methodOf(call: SyntaxNode): string | null {
  const fn = call.childForFieldName("function");
  return fn?.type === "attribute" ? (fn.childForFieldName("attribute")?.text ?? null) : null;
}

/**
 * Whether the file parses the command line strictly: some `X.parse_args()` reads sys.argv (no
 * argument, `None`, `args=None` or `sys.argv[1:]`) and no `parse_known_args` (which leaves unknown
 * words aside instead of exiting).
 */
function parsesArgvStrictly(calls: readonly SyntaxNode[]): boolean {
  let strict = false;
  for (const call of calls) {
    const m = methodOf(call);
    if (m === "parse_known_args" || m === "parse_known_intermixed_args") return false;
    if (m !== "parse_args") continue;
    const args = (call.childForFieldName("arguments")?.namedChildren ?? []).filter(
      (a): a is SyntaxNode => !!a && a.type !== "comment",
    );
    const value =
      args.length === 1
        ? args[0].type === "keyword_argument" && args[0].childForFieldName("name")?.text === "args"
          ? args[0].childForFieldName("value")
          : args[0]
        : null;
    if (args.length === 0 || value?.text === "None" || value?.text.replace(/\s/g, "") === "sys.argv[1:]") strict = true;
  }
  return strict;
}

/** GPU044: `--local_rank` alone in a script that `python -m torch.distributed.launch` starts, which passes `--local-rank` since torch 2.0. */
export const rule: PythonRule = {
  meta: {
    code: "GPU044",
    name: "launch-local-rank-option-spelling",
    severity: "warning",
    fixable: true,
    // The underscored option and a parse of the command line, by name; runs only when a script of the
    // project starts the file (the launch lookup that GPU036 and GPU037 use).
    trigger: (t) => t.has("local_rank") && t.has("parse_args"),
    needs: "slurm",
    docs: {
      what: 'Reports `parser.add_argument("--local_rank", ...)` (the underscored spelling only) in a Python file that a shell or Slurm job script of the project starts with `python -m torch.distributed.launch` without `--use-env`, when the file parses the command line with `parse_args()`. The scripts are looked for as for GPU036 (beside the file, in its parent folders up to the repository root, and in their direct subfolders).',
      follows:
        "Every `add_argument` and `parse_args` call in the file (functions included), the project's shell and job scripts that start it (looked for as for GPU036) for `python -m torch.distributed.launch` without `--use-env`, and the project's torch pin (requirements*.txt, pyproject dependencies, environment.yml, `target-torch`). Not followed: parsers built in other modules, launches written elsewhere (a Makefile, a CI configuration, a README), and scripts that start the file through another script.",
      why: "Since PyTorch 2.0, `torch.distributed.launch` passes `--local-rank=<rank>` (dashed) to the script it starts; before, `--local_rank=<rank>`. PyTorch's documentation of the launcher says that a parser declaring only `--local_rank` makes the launch fail with `error: unrecognized arguments: --local-rank=<rank>`: argparse exits in every worker before training starts.",
      example:
        '# train.py, started by run.sh: `python -m torch.distributed.launch --nproc_per_node 2 train.py`\nimport argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=0)  # GPU044\nargs = parser.parse_args()\n',
      fix: '# train.py, started by run.sh: `python -m torch.distributed.launch --nproc_per_node 2 train.py`\nimport argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", "--local-rank", type=int, default=0)\nargs = parser.parse_args()\n',
      whenNotToCare:
        "When the project runs on torch < 2.0: the rule is silent when it pins torch below 2.0 (requirements*.txt, pyproject dependencies, environment.yml) or `target-torch` says so. Not reported: launches with `--use-env` and torchrun (neither passes the argument), files that use `parse_known_args` (the word is then set aside, not an error; the value stays at its default), and parsers built in another module. Better still, start with torchrun and read `LOCAL_RANK` from the environment.",
      references: [LAUNCH_DOC, USE_ENV_DOC],
    },
  },
  check(ctx) {
    const launch = (ctx.slurm ?? []).find((l) => l.passesLocalRankArg);
    if (!launch || ctx.torchBelow20) return;
    const calls = ctx.model.nodesOfType("call").filter((c): c is SyntaxNode => !!c);
    if (!parsesArgvStrictly(calls)) return;
    const declared = calls.filter((c) => methodOf(c) === "add_argument").map((c) => optionStrings(c));
    // A parser that takes --local-rank (or a longer option it abbreviates to) accepts the launcher's word.
    if (declared.some((opts) => opts.some((o) => o.value.startsWith("--local-rank")))) return;
    for (const opts of declared) {
      const under = opts.find((o) => o.value === "--local_rank");
      if (under) report(ctx, launch, under.node);
    }
  },
};

function report(ctx: RuleContext, launch: SlurmLaunch, node: SyntaxNode): void {
  const quote = /^[rRuUbB]*(['"])/.exec(node.text)?.[1] ?? '"';
  const script = launch.script.replace(/^.*[\\/]/, "");
  const end = nodeRange(node).end;
  ctx.report({
    range: nodeRange(node),
    message: `${script} (line ${launch.line + 1}) starts this file with python -m torch.distributed.launch, which passes --local-rank=<rank> since torch 2.0, but the parser declares only --local_rank: parse_args() exits in every worker with "error: unrecognized arguments: --local-rank=<rank>" (PyTorch's launcher documentation); accept both spellings, or start with torchrun and read LOCAL_RANK`,
    fix: {
      title: `Also accept ${quote}--local-rank${quote}`,
      edits: [{ range: { start: end, end }, newText: `, ${quote}--local-rank${quote}` }],
      safe: true,
    },
  });
}
