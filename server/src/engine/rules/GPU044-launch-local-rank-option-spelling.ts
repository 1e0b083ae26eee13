import type { PythonRule, RuleContext } from "../rule";
import type { RankArgLaunch, SlurmLaunch } from "../slurmLaunch";
import type { SyntaxNode } from "../python/parser";
import type { ProjectReach } from "../python/model";
import type { RelatedInfo } from "../types";
import { nodeRange } from "../python/events";
import {
  CLASS_SCOPE,
  isKnownArgsParse,
  isStrictParse,
  MAIN_SCOPE,
  methodOf,
  moduleCalls,
  optionStrings,
  parseTargets,
  scopeOf,
} from "../python/argparseReach";

const LAUNCH_DOC =
  'PyTorch, torch.distributed.launch (torch/distributed/launch.py docstring, https://pytorch.org/docs/stable/distributed.html#launch-utility), "Changed in version 2.0.0: The launcher will passes the ``--local-rank=<rank>`` argument to your script. From PyTorch 2.0.0 onwards, the dashed ``--local-rank`` is preferred over the previously used underscored ``--local_rank``. For backward compatibility, it may be necessary for users to handle both cases in their argument parsing code. This means including both ``"--local-rank"`` and ``"--local_rank"`` in the argument parser. If only ``"--local_rank"`` is provided, the launcher will trigger an error: "error: unrecognized arguments: --local-rank=<rank>"."';
const USE_ENV_DOC =
  'PyTorch, torch/distributed/run.py `get_use_env`: "``use_env`` is a legacy argument ... ``use_env`` is only used by the ``torch.distributed.launch``"; with `--use-env` (or under torchrun) the local rank is only in the LOCAL_RANK environment variable';

/**
 * Whether the file parses the command line strictly: some `X.parse_args()` reads sys.argv (no
 * argument, `None`, `args=None` or `sys.argv[1:]`) and no `parse_known_args` (which leaves unknown
 * words aside instead of exiting).
 */
function parsesArgvStrictly(calls: readonly SyntaxNode[]): boolean {
  return !calls.some(isKnownArgsParse) && calls.some(isStrictParse);
}

const ARGPARSE_DOC =
  'Python, argparse, "Partial parsing" (https://docs.python.org/3/library/argparse.html#partial-parsing): `parse_known_args()` "works much like parse_args() except that it does not produce an error when extra arguments are present. Instead, it returns a two item tuple containing the populated namespace and the list of remaining argument strings."';

/** GPU044: `--local_rank` alone in a parser that a file started by `python -m torch.distributed.launch` parses, which passes `--local-rank` since torch 2.0. */
export const rule: PythonRule = {
  meta: {
    code: "GPU044",
    name: "launch-local-rank-option-spelling",
    severity: "warning",
    fixable: true,
    fixSafety: "safe",
    // The underscored option in an add_argument call, by name (the parse may be in a caller of another
    // module); runs only when a script of the project passes the local rank as an argument to this
    // file or to another file around it (the launch lookup that GPU036 and GPU037 use).
    trigger: (t) => t.has("local_rank") && t.has("add_argument"),
    needs: "localRankArg",
    docs: {
      what: 'Reports `parser.add_argument("--local_rank", ...)` (the underscored spelling only) in a Python file that a shell or Slurm job script of the project starts with `python -m torch.distributed.launch` without `--use-env`, when the file parses the command line with `parse_args()`. It also reports it in a module of the project whose parser such a started file reaches through its calls (pretrain_gpt.py → `initialize_megatron()` in megatron/initialize.py → `parse_args()` in megatron/arguments.py: the finding is on the option in arguments.py, naming the launch and the calls). The scripts are looked for as for GPU036 (beside the file, in its parent folders up to the repository root, and in their direct subfolders), from the file being linted.',
      follows:
        "Every `add_argument` and `parse_args` call in the file (functions included); the project's shell and job scripts around it (looked for as for GPU036) for `python -m torch.distributed.launch` without `--use-env` (its options also through a variable that the script assigns once to a literal string or array, `$DISTRIBUTED_ARGS`; a launch with a variable among its options that is not known may hold `--use-env` and counts as none), whether they start this file or another one; for another started file, its calls that resolve through its imports to functions of the project's modules, up to three modules deep (each called function with the functions of its module it calls by name, python/project.ts `reach`), to the function of this file that declares the option and parses (or whose caller parses) the command line, or an import of this file where its module level does; and the project's torch pin (requirements*.txt, pyproject dependencies, environment.yml, `target-torch`; also the started file's folder's requirements). The finding lives in the declaring module and is made when that module is linted, by a search from it to the files the scripts around it start (the started file's own lint reports nothing there); it costs one search per linted file that declares `--local_rank` alone (the modules read are kept in the project index, and they are the finding's dependencies: the CLI's cache and the editor re-check it when one changes). Not followed: calls that do not resolve (a parameter such as an `extra_args_provider`, a method, a name built at run time), the module-level code and the methods of the modules on the way, scripts further away than GPU036 looks from the declaring module, launches written elsewhere (a Makefile, a CI configuration, a README), and scripts that start the file through another script.",
      why: "Since PyTorch 2.0, `torch.distributed.launch` passes `--local-rank=<rank>` (dashed) to the script it starts; before, `--local_rank=<rank>`. PyTorch's documentation of the launcher says that a parser declaring only `--local_rank` makes the launch fail with `error: unrecognized arguments: --local-rank=<rank>`: argparse exits in every worker before training starts. Where the parser lives in a shared arguments module, every entry point that the launcher starts fails the same way.",
      example:
        '# train.py, started by run.sh: `python -m torch.distributed.launch --nproc_per_node 2 train.py`\nimport argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=0)  # GPU044\nargs = parser.parse_args()\n',
      fix: '# train.py, started by run.sh: `python -m torch.distributed.launch --nproc_per_node 2 train.py`\nimport argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", "--local-rank", type=int, default=0)\nargs = parser.parse_args()\n',
      whenNotToCare:
        "When the project runs on torch < 2.0: the rule is silent when it pins torch below 2.0 (requirements*.txt, pyproject dependencies, environment.yml) or `target-torch` says so. Not reported: launches with `--use-env` and torchrun (neither passes the argument); modules that use `parse_known_args` (the word is then set aside, not an error; the value stays at its default), as does a caller's module for a parser it parses; a started file or module on the way that declares `--local-rank` itself (the shared parser may take it there); and parsers reached only through calls the analysis cannot resolve. Better still, start with torchrun and read `LOCAL_RANK` from the environment.",
      references: [LAUNCH_DOC, USE_ENV_DOC, ARGPARSE_DOC],
    },
  },
  check(ctx) {
    if (ctx.torchBelow20) return;
    const calls = ctx.model.nodesOfType("call").filter((c): c is SyntaxNode => !!c);
    const declared = calls.filter((c) => methodOf(c) === "add_argument").map((c) => optionStrings(c));
    // A parser that takes --local-rank (or a longer option it abbreviates to) accepts the launcher's word.
    if (declared.some((opts) => opts.some((o) => o.value.startsWith("--local-rank")))) return;
    const under = declared.flatMap((opts) => opts.filter((o) => o.value === "--local_rank").map((o) => o.node));
    if (under.length === 0) return;
    const launch = (ctx.slurm ?? []).find((l) => l.passesLocalRankArg);
    if (launch) {
      if (parsesArgvStrictly(calls)) for (const node of under) report(ctx, node, launchMessage(launch));
      return;
    }
    reportReached(ctx, under);
  },
};

/**
 * The options of a module that no script starts but that a started file's calls reach
 * (ProjectLookup.launchReach): each `--local_rank` declared in a module-level function or at module
 * level, reported with the first launch whose file reaches a scope that parses it.
 */
function reportReached(ctx: RuleContext, under: readonly SyntaxNode[]): void {
  const launches = ctx.rankArgLaunches ?? [];
  const project = ctx.project;
  if (launches.length === 0 || !project?.launchReach) return;
  const calls = moduleCalls(ctx.model);
  const byScope = new Map<string, { launch: RankArgLaunch; reach: ProjectReach } | null>();
  for (const node of under) {
    const scope = scopeOf(node);
    // A `__main__` block runs only when the module is the program; methods are not followed.
    if (scope === MAIN_SCOPE || scope === CLASS_SCOPE) continue;
    let found = byScope.get(scope);
    if (found === undefined) {
      found = null;
      const targets = parseTargets(calls, new Set([scope]));
      for (const launch of targets.size ? launches : []) {
        const reach = project.launchReach(launch.file, targets);
        if (reach) {
          found = { launch, reach };
          break;
        }
      }
      byScope.set(scope, found);
    }
    if (found) report(ctx, node, reachedMessage(found.launch, found.reach), related(found.launch, found.reach));
  }
}

const base = (path: string) => path.replace(/^.*[\\/]/, "");
const CONSEQUENCE =
  'parse_args() exits in every worker with "error: unrecognized arguments: --local-rank=<rank>" (PyTorch\'s launcher documentation); accept both spellings, or start with torchrun and read LOCAL_RANK';

function launchMessage(launch: SlurmLaunch): string {
  return `${base(launch.script)} (line ${launch.line + 1}) starts this file with python -m torch.distributed.launch, which passes --local-rank=<rank> since torch 2.0, but the parser declares only --local_rank: ${CONSEQUENCE}`;
}

function reachedMessage(launch: RankArgLaunch, reach: ProjectReach): string {
  return `${base(launch.script)} (line ${launch.line + 1}) starts ${reach.launched} with python -m torch.distributed.launch, which passes --local-rank=<rank> since torch 2.0, and its calls reach this parser (${reach.where}), which declares only --local_rank: ${CONSEQUENCE}`;
}

/** The launch and each call on the way, in their files. */
function related(launch: RankArgLaunch, reach: ProjectReach): RelatedInfo[] {
  const at = { line: launch.line, character: 0 };
  return [
    {
      range: { start: at, end: at },
      message: `python -m torch.distributed.launch starts ${reach.launched} here`,
      file: launch.script,
    },
    ...reach.chain.map((step, i) => ({
      range: step.range,
      message: `call ${i + 1} of ${reach.chain.length} on the way to this parser`,
      file: step.file,
    })),
  ];
}

function report(ctx: RuleContext, node: SyntaxNode, message: string, rel?: RelatedInfo[]): void {
  const quote = /^[rRuUbB]*(['"])/.exec(node.text)?.[1] ?? '"';
  const end = nodeRange(node).end;
  ctx.report({
    range: nodeRange(node),
    message,
    ...(rel ? { related: rel } : {}),
    fix: {
      title: `Also accept ${quote}--local-rank${quote}`,
      edits: [{ range: { start: end, end }, newText: `, ${quote}--local-rank${quote}` }],
      safe: true,
    },
  });
}
