import type { PythonRule, RuleContext } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { envWritesAnywhere } from "../python/model";
import { nodeRange } from "../python/events";
import type { Fix } from "../types";
import { calleePath, contains, enclosingFunction, envReadsOf, isAssignmentTarget, statementOf } from "./shared/py";

const VARIABLE = "CUDA_VISIBLE_DEVICES";

/** The exception names whose handler catches the KeyError of a missing variable. */
const CATCHES_KEY_ERROR = new Set(["KeyError", "LookupError", "Exception", "BaseException"]);

/**
 * Whether `read` sits in the body of a `try` whose handlers catch KeyError (a bare `except`, or one
 * naming KeyError, LookupError, Exception or BaseException, alone or in a tuple).
 */
function caught(read: SyntaxNode): boolean {
  for (let p = read.parent, child: SyntaxNode = read; p; child = p, p = p.parent) {
    if (p.type === "function_definition" || p.type === "lambda") return false;
    if (p.type !== "try_statement" || p.childForFieldName("body")?.id !== child.id) continue;
    for (const h of p.namedChildren) {
      if (h?.type !== "except_clause") continue;
      const what = h.namedChildren.find((c) => c && c.type !== "block" && c.type !== "comment");
      if (!what) return true;
      const names = (what.type === "as_pattern" ? what.namedChildren[0] : what)?.text ?? "";
      if (names.split(/[\s(),]+/).some((n) => CATCHES_KEY_ERROR.has(n.replace(/^builtins\./, "")))) return true;
    }
  }
  return false;
}

/** Whether `read` is inside an `assert` statement (a check that the variable is set, on purpose). */
function inAssert(read: SyntaxNode): boolean {
  for (let p = read.parent; p; p = p.parent) {
    if (p.type === "assert_statement") return true;
    if (p.type === "function_definition" || p.type === "block") return false;
  }
  return false;
}

/**
 * The scopes (functions, or null for the module) that ask whether the variable is set: a
 * `"CUDA_VISIBLE_DEVICES" in os.environ` test, or a read with a default (`.get`, `os.getenv`).
 */
function checkingScopes(ctx: RuleContext): Array<SyntaxNode | null> {
  const tests = ctx.model
    .nodesMentioning("comparison_operator", [VARIABLE])
    .filter(
      (c) =>
        c.children.some((t) => t?.type === "in" || t?.type === "not in") &&
        c.namedChildren.some((x) => x && stringValue(x) === VARIABLE),
    );
  const withDefault = envReadsOf(ctx.model, VARIABLE)
    .filter((r) => r.node.type !== "subscript")
    .map((r) => r.node);
  return [...tests, ...withDefault].map((n) => enclosingFunction(n));
}

/**
 * Whether the scope of `read` asks whether the variable is set, or calls, before the read, a function
 * of this file that does (`devices = visible(); if devices is None: return`, where `visible` tests
 * the variable): the read may sit behind the helper's answer, which this rule does not follow.
 */
function checkedInScope(ctx: RuleContext, read: SyntaxNode, checking: Array<SyntaxNode | null>): boolean {
  const scope = enclosingFunction(read);
  if (checking.some((f) => f?.id === scope?.id)) return true;
  if (!scope) return false;
  const helpers = checking.map((f) => f?.childForFieldName("name")?.text).filter((n): n is string => !!n);
  if (!helpers.length) return false;
  return ctx.model.nodesMentioning("call", helpers, true).some((call) => {
    const callee = call.childForFieldName("function");
    const name = callee?.type === "attribute" ? callee.childForFieldName("attribute")?.text : callee?.text;
    return (
      !!name && helpers.includes(name) && call.startIndex < read.startIndex && enclosingFunction(call)?.id === scope.id
    );
  });
}

/** Expressions whose parts, other than the first, may not be evaluated (the body of a lambda or comprehension never may). */
const MAYBE_SKIPPED = new Set([
  "conditional_expression",
  "lambda",
  "list_comprehension",
  "set_comprehension",
  "dictionary_comprehension",
  "generator_expression",
]);

/**
 * Whether `part` of `expr` (a {@link MAYBE_SKIPPED} expression) is evaluated whenever `expr` is: the
 * test of `a if c else b`, the iterable of a comprehension's first `for` clause.
 */
function alwaysEvaluatedPart(expr: SyntaxNode, part: SyntaxNode): boolean {
  if (expr.type === "conditional_expression") return expr.namedChildren[1]?.id === part.id;
  if (expr.type === "lambda") return false;
  return expr.namedChildren.find((c) => c?.type === "for_in_clause")?.id === part.id;
}

/**
 * Whether evaluating `stmt` always evaluates `read` (inside it) on the way to running `later`: no
 * `or`, conditional expression, lambda or comprehension lies between them; an `and` only where
 * `stmt` is an `if`/`elif`/`while` test that `later`'s body needs true (`if use_gpu and
 * len(os.environ[K]) > 0: print(os.environ[K])`).
 */
function evaluatedWhole(read: SyntaxNode, top: SyntaxNode, andAllowed: boolean): boolean {
  for (let child = read, p = read.parent; p && child.id !== top.id; child = p, p = p.parent) {
    if (MAYBE_SKIPPED.has(p.type) && !alwaysEvaluatedPart(p, child)) return false;
    if (p.type === "for_in_clause" && p.childForFieldName("right")?.id !== child.id) return false;
    if (p.type === "boolean_operator" && p.childForFieldName("right")?.id === child.id) {
      if (!andAllowed || p.childForFieldName("operator")?.type !== "and") return false;
    }
  }
  return true;
}

/**
 * Whether `first` (a read that raises KeyError where the variable is unset) always runs before
 * `later` in the same function: its statement comes before `later` in a block that holds both, or
 * it is in the test of the `if`/`elif`/`while` whose body holds `later`. Then `later` never raises:
 * where the variable is unset, `first` raised before it (one finding, not two, for one missing
 * variable).
 */
function runsBefore(first: SyntaxNode, later: SyntaxNode): boolean {
  if (first.endIndex > later.startIndex || enclosingFunction(first)?.id !== enclosingFunction(later)?.id) return false;
  for (let p = first.parent; p; p = p.parent) {
    const test = p.childForFieldName("condition");
    const body = p.childForFieldName(p.type === "while_statement" ? "body" : "consequence");
    if ((p.type === "if_statement" || p.type === "elif_clause" || p.type === "while_statement") && test && body)
      if (contains(test, first)) return contains(body, later) && evaluatedWhole(first, test, true);
    if (p.type === "function_definition" || p.type === "block" || p.type === "module") break;
  }
  const stmt = statementOf(first);
  const simple = stmt.type === "expression_statement" || stmt.type === "return_statement";
  return simple && !!stmt.parent && contains(stmt.parent, later) && evaluatedWhole(first, stmt, false);
}

/** GPU051: `os.environ["CUDA_VISIBLE_DEVICES"]` read without a default where nothing sets it. */
export const rule: PythonRule = {
  meta: {
    code: "GPU051",
    name: "visible-devices-read-without-default",
    severity: "warning",
    fixable: true,
    fixSafety: "unsafe",
    preview: true,
    // A subscript read of the variable names it in a string.
    trigger: (t) => t.has(VARIABLE) && t.hasWord("environ"),
    docs: {
      what: 'Finds `os.environ["CUDA_VISIBLE_DEVICES"]` read by subscript (no default) in a program that does not set the variable itself: `len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))` to count GPUs, or to pick ids. Where no person, launcher or scheduler set the variable, which is the usual case on a workstation, in a container or under torchrun or Accelerate, the read raises KeyError before any work starts.',
      follows:
        "Every subscript read of the variable in the file (functions and methods included). Silent where the file writes the variable anywhere, where the read's function (or the module) also tests it (`\"CUDA_VISIBLE_DEVICES\" in os.environ`) or reads it with a default (`os.environ.get`, `os.getenv`), where a `try` around it catches KeyError (or LookupError, Exception, a bare `except`), inside an `assert` (a deliberate check that the variable is set), in a file that imports `ray` (Ray sets the variable in every task and actor), in a test module (`test_*.py`, `*_test.py`, `conftest.py`, a `tests` folder: the code under test or a fixture sets the variable before the test reads it), where the read's function first calls a function of the file that tests the variable (the read may sit behind the helper's answer), in a file a job script of the project starts or that reads a Slurm variable without a default (`os.environ[\"SLURM_PROCID\"]`: written for a Slurm job, and Slurm sets it for a job with GPUs), in a file that calls python-dotenv's `load_dotenv()` (a `.env` file, not read here, may set it), and where the project starts the file and every start it writes down sets the variable: the `python`/torchrun commands of its shell scripts and of its Markdown documents' shell blocks that name the file, each with `CUDA_VISIBLE_DEVICES=...` on the command or exported before it in the same script or block (a README's `CUDA_VISIBLE_DEVICES=0,1 python train.py`). One finding per missing variable in a function: a later read that runs only after an earlier one (the statement before it, or the `if` test whose body holds it) cannot raise. Not followed: a start the project does not write down (a habit in the shell), a script that runs another script that starts the file (a README that exports the variable, then `bash sh/eval.sh`), a command in a README's inline code span or in a comment, and other modules.",
      why: '`os.environ` is a mapping: reading a key that is not set raises KeyError (Python documentation, os.environ). Nothing sets `CUDA_VISIBLE_DEVICES` by default: it is not among the variables torchrun sets for its workers (PyTorch, torchrun, Environment Variables: LOCAL_RANK, RANK, GROUP_RANK, ROLE_RANK, LOCAL_WORLD_SIZE, WORLD_SIZE, ..., MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*), CUDA does not set it (it is a user setting read at initialisation: CUDA C Programming Guide, CUDA Environment Variables), and the schedulers set it only for jobs given GPUs (Slurm, Generic Resource Scheduling: for GPUs the job\'s environment gets CUDA_VISIBLE_DEVICES) and Ray only in its tasks and actors. A trainer that counts `os.environ["CUDA_VISIBLE_DEVICES"].split(",")` therefore crashes for the users who never chose GPUs by hand (ad12/meddlr#44). Preview: the ecosystem corpus (37 code bases) holds no such read, and on public code many findings are reads that something the file does not show sets the variable for. 2026-12-07: in 48 files, 38 findings, 26 true; in 34 other files, 28 findings, 19 true (a launcher that starts one worker per GPU with CUDA_VISIBLE_DEVICES=i, a Slurm job, a Ray actor in a module that does not import ray, a library mixin called just before). 2026-12-07 (later), a fresh sample of 87 fetched repositories (frameworks, serving, RL, evaluation and research code) and 11 files found by exact search: 31 findings, 12 true (39%); with the project\'s written-down starts, `load_dotenv()` and the one-finding-per-function rule, 25 findings, 12 true (48%); a second sample of 8 files: 11 findings, 6 true, then 7, 6 true. What keeps it below the default set\'s bar: starts written down two steps away (Qwen2.5-Math\'s evaluation/math_eval.py, copied into dozens of RL repositories: its README exports the variable, then runs sh/eval.sh, which runs the file), READMEs that show the command in inline code (pi-GAN), programs that require the variable on purpose and check it at once (`assert len(devices) == config["gpus"]`, a runner that needs distinct GPUs listed), and a library helper for after the project\'s own setup function set it.',
      example:
        'import os\nimport torch\n\nnum_gpus = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))  # GPU051: KeyError when unset\nif num_gpus > 1:\n    model = torch.nn.DataParallel(torch.nn.Linear(4, 4))\n',
      fix: "import os\nimport torch\n\nnum_gpus = torch.cuda.device_count()\nif num_gpus > 1:\n    model = torch.nn.DataParallel(torch.nn.Linear(4, 4))\n",
      whenNotToCare:
        "When the program only ever runs where the variable is set: a container or job template that always sets it, a launcher of the project's own that exports it (one this rule does not see: a script that runs the script that starts the file, a README's inline command), or a program that checks the GPUs it was given right after reading them (its KeyError is its way of saying the variable is required). Counting GPUs is better done with `torch.cuda.device_count()`, which also honours the variable when it is set.",
      references: [
        "Python documentation, os.environ: a mapping object where keys and values are strings that represent the process environment; a missing key raises KeyError (mapping semantics)",
        "PyTorch, torchrun (Elastic Launch), Environment Variables: the variables set for each worker (CUDA_VISIBLE_DEVICES is not among them) (https://pytorch.org/docs/stable/elastic/run.html)",
        "Slurm, Generic Resource (GRES) Scheduling, GPU Management: CUDA_VISIBLE_DEVICES is set for the job's allocated GPUs (https://slurm.schedmd.com/gres.html)",
        "Ray, Accelerator Support: Ray sets CUDA_VISIBLE_DEVICES for tasks and actors (empty with num_gpus=0)",
        'ad12/meddlr#44 (2022-06-12): the trainer\'s os.environ["CUDA_VISIBLE_DEVICES"] read replaced by os.environ.get(..., "")',
      ],
    },
  },
  check(ctx) {
    const reads = envReadsOf(ctx.model, VARIABLE).filter((r) => r.node.type === "subscript");
    if (!reads.length) return;
    if (envWritesAnywhere(ctx.model).some((w) => w.variable === VARIABLE)) return;
    if ((ctx.slurm?.length ?? 0) > 0 || readsSlurmVariable(ctx)) return;
    for (const path of ctx.model.symbols.values()) if (path === "ray" || path.startsWith("ray.")) return;
    if (loadsDotenv(ctx)) return;
    // A test reads the variable after the code under test or a fixture set it (monkeypatch.setenv).
    if (ctx.testModule) return;
    const checking = checkingScopes(ctx);
    const reported: SyntaxNode[] = [];
    for (const r of reads) {
      if (caught(r.node) || inAssert(r.node) || checkedInScope(ctx, r.node, checking)) continue;
      if (reported.some((first) => runsBefore(first, r.node))) continue;
      // Asked once, for the first read to report: the documents are read only then.
      if (!reported.length && everyLaunchSetsVisible(ctx)) return;
      reported.push(r.node);
      ctx.report({
        range: nodeRange(r.node),
        message: `${r.node.text} has no default and nothing in this program sets ${VARIABLE}: where no person, launcher or scheduler set it (a plain \`python\` run, torchrun, Accelerate) it raises KeyError: '${VARIABLE}'; count GPUs with torch.cuda.device_count(), or read it with os.environ.get("${VARIABLE}", "")`,
        fix: getFix(r.node),
      });
    }
  },
};

/**
 * Whether the project starts this file, and every start it writes down sets CUDA_VISIBLE_DEVICES: the
 * `python`/torchrun commands of its shell scripts and of its documents' shell blocks that name the
 * file, each with the variable assigned on the command (`CUDA_VISIBLE_DEVICES=0,1 python train.py`,
 * a README's usual line) or exported before it in the same script or block. The program then runs as
 * written down with the variable set; the read is harmless there (a start that does not set it, or
 * none at all, keeps the finding).
 */
function everyLaunchSetsVisible(ctx: RuleContext): boolean {
  const launches = [...(ctx.launchNodes ?? []), ...(ctx.project?.documentedPythonLaunches?.() ?? [])];
  return launches.length > 0 && launches.every((l) => l.setsVisibleDevices);
}

/**
 * Whether the file calls python-dotenv's `load_dotenv()`, which copies the variables of a `.env` file
 * into `os.environ` (those not already set): the file may set CUDA_VISIBLE_DEVICES, and this rule
 * reads no `.env` file (one is usually kept out of the repository, per machine).
 */
function loadsDotenv(ctx: RuleContext): boolean {
  const LOAD = /^dotenv(?:\.main)?\.load_dotenv$/;
  // The call names the function or an alias it was imported under (`from dotenv import load_dotenv as ld`).
  const names = ["load_dotenv", ...[...ctx.model.symbols].filter(([, path]) => LOAD.test(path)).map(([n]) => n)];
  return ctx.model.nodesMentioning("call", names).some((c) => LOAD.test(calleePath(ctx.model, c) ?? ""));
}

/**
 * Whether the file reads a Slurm variable by subscript (`os.environ["SLURM_PROCID"]`, no default): a
 * program that fails outside a Slurm job is written for one, and Slurm sets CUDA_VISIBLE_DEVICES in
 * every job given GPUs (Slurm, Generic Resource Scheduling).
 */
function readsSlurmVariable(ctx: RuleContext): boolean {
  return ctx.model.nodesMentioning("subscript", ["SLURM_"]).some((n) => {
    const key = stringValue(n.childForFieldName("subscript"));
    return !!key?.startsWith("SLURM_") && !isAssignmentTarget(n) && ctx.model.isEnviron(n.childForFieldName("value"));
  });
}

/**
 * `os.environ["CUDA_VISIBLE_DEVICES"]` → `os.environ.get("CUDA_VISIBLE_DEVICES", "")`: unsafe, since
 * code that splits the value then sees one empty id (`"".split(",")` is `[""]`), which it may count
 * as one GPU.
 */
function getFix(read: SyntaxNode): Fix | undefined {
  const obj = read.childForFieldName("value");
  const key = read.childForFieldName("subscript");
  // Not where the subscript is the target (`os.environ[...] = v` writes; only a read gets `.get`).
  const target = read.parent?.childForFieldName("left")?.id === read.id;
  if (!obj || !key || (target && (read.parent?.type === "assignment" || read.parent?.type === "augmented_assignment")))
    return undefined;
  return {
    title: `Read it with ${obj.text}.get(${key.text}, "")`,
    edits: [{ range: nodeRange(read), newText: `${obj.text}.get(${key.text}, "")` }],
    safe: false,
  };
}
