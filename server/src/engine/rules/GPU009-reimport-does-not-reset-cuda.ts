import type { PythonRule, RuleContext } from "../rule";
import { envWrites } from "../rule";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { nodeRange } from "../python/events";
import { importBindings } from "../python/walker";
import { stateBefore } from "../python/timeline";
import { STARTUP_VARIABLES } from "../frameworks";
import type { Fix, RelatedInfo } from "../types";
import { callArgs, calleePath, removeStatement, statementOf } from "./shared/py";

/** The frameworks whose CUDA state a re-import is believed to reset (rules.md). */
const FRAMEWORKS = ["torch", "tensorflow", "jax"];

/** The framework a module path belongs to (`torch.cuda` → `torch`), or null. */
function frameworkOf(path: string | null | undefined): string | null {
  const top = path?.split(".")[0];
  return top && FRAMEWORKS.includes(top) ? top : null;
}

/** GPU009: `importlib.reload(torch)`, `del sys.modules["torch"]` / `del torch` followed by `import torch`. */
export const rule: PythonRule = {
  meta: {
    code: "GPU009",
    name: "reimport-does-not-reset-cuda",
    severity: "error",
    fixable: true,
    fixSafety: "unsafe",
    // A framework it knows (FRAMEWORKS), by name, and: `importlib.reload(torch)` / `imp.reload` (the
    // names reload and importlib or imp); `sys.modules.pop("torch")` (sys, modules, pop); a `del`
    // before an `import` (the re-import) whose target is `sys.modules[...]` or a name bound to the
    // framework itself (TextProbe.delOfModule). The key of `sys.modules` is a string naming the
    // framework (TextProbe.quotedAfterWord); the pop's re-import follows it (a `pop` before an `import`).
    trigger: (t) =>
      t.hasAnyWord(FRAMEWORKS) &&
      ((t.hasWord("reload") && t.hasAnyWord(["importlib", "imp"])) ||
        (t.wordBefore("pop", "import") &&
          t.hasWord("modules") &&
          t.hasWord("sys") &&
          t.quotedAfterWord("pop", FRAMEWORKS)) ||
        (t.wordBefore("del", "import") &&
          ((t.hasWord("modules") && t.hasWord("sys") && t.quotedAfterWord("del", FRAMEWORKS)) ||
            t.delOfModule(FRAMEWORKS)))),
    docs: {
      what: 'Finds attempts to \'re-import\' a framework so that a changed CUDA_VISIBLE_DEVICES (or another startup variable) takes effect: `importlib.reload(torch)`, and `del sys.modules["torch"]`, `sys.modules.pop("torch")` or `del torch` followed by another `import torch`; for torch, tensorflow and jax.',
      follows:
        "The file's text in source order: each `importlib.reload`, `del` and `sys.modules.pop` of torch, tensorflow or jax, and an import of the same framework after it anywhere in the file (functions included). Not followed: the order the code actually runs in (a later line counts as later), and reloads or imports in other modules.",
      why: "The CUDA driver and the framework's device state belong to the process, not to the Python module object. Measured on 2 x H200 with torch 2.11 (ground-truth.md): `del torch; import torch` after CUDA initialised changes nothing — `torch` stays in `sys.modules`, the program stays on the GPUs it already saw, and a CUDA_VISIBLE_DEVICES set in between still has no effect. Removing the module from `sys.modules` or reloading it only re-runs the package's Python code: the native extension (`torch._C`, with the CUDA state) stays loaded, and Python does not initialise an extension module a second time (importlib documentation), so the environment is not read again; the result can also hold two inconsistent copies of the module's classes. Measured with `npm run verify:gpu` on 2 x H200 (docs/ground-truth.md): with torch 2.11, `del sys.modules[\"torch\"]` followed by `import torch` does not even complete — the re-import raises `RuntimeError: Only a single TORCH_LIBRARY can be used to register the namespace triton`, and the process stays on physical GPU 0. The only reset is a new process.",
      example:
        'import os\nimport sys\nimport torch\n\nwarm = torch.zeros(1).cuda()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\ndel sys.modules["torch"]  # GPU009: does not reset CUDA\nimport torch\n',
      fix: "# Set the variable before the process starts, e.g. GPU Pilot's run command or:\n#   CUDA_VISIBLE_DEVICES=1 python train.py\nimport torch\n\nwarm = torch.zeros(1).cuda()\n",
      whenNotToCare:
        "Never for device selection. Reloading a framework for other reasons (developing the framework itself) is outside what this rule is about; silence it with `# noqa: GPU009`.",
      references: [
        "ground-truth.md: row `del torch; import torch` after CUDA init → no: `torch` stays in `sys.modules`, nothing changes",
        "Python documentation, importlib.reload: the init function of extension modules is not called a second time; old objects stay alive",
      ],
    },
  },
  check(ctx) {
    const imports = ctx.model
      .nodesOfType(["import_statement", "import_from_statement"])
      .filter((s): s is SyntaxNode => !!s);
    // After `del torch`, only an import that binds the framework's top-level module again is a re-import.
    const rebindAfter = (framework: string, offset: number) =>
      imports.find((imp) => imp.startIndex > offset && importBindings(imp).some(([, path]) => path === framework)) ??
      null;
    const reimportAfter = (framework: string, offset: number) =>
      imports.find(
        (imp) => imp.startIndex > offset && importBindings(imp).some(([, path]) => frameworkOf(path) === framework),
      ) ?? null;

    for (const call of ctx.model.nodesOfType("call")) {
      if (!call) continue;
      const q = calleePath(ctx.model, call);
      if (q !== "importlib.reload" && q !== "imp.reload") continue;
      const arg = callArgs(call).positional[0];
      const framework = frameworkOf(ctx.model.resolve(arg));
      if (!arg || !framework) continue;
      const stmt = statementOf(call);
      report(ctx, stmt, `\`${call.text}\` does not reset CUDA`, framework, null, onlyThis(stmt, call));
    }
    for (const del of ctx.model.nodesOfType("delete_statement")) {
      if (!del) continue;
      const targets =
        del.namedChildren[0]?.type === "expression_list" ? del.namedChildren[0].namedChildren : del.namedChildren;
      const hits = targets.map((t) => (t ? deletedFramework(ctx, t) : null));
      const framework = hits.find((h) => h !== null);
      if (!framework) continue;
      const byName = targets.some((t) => t?.type === "identifier" && hits[targets.indexOf(t)] !== null);
      const again = byName ? rebindAfter(framework, del.endIndex) : reimportAfter(framework, del.endIndex);
      if (!again) continue;
      report(
        ctx,
        del,
        `\`${del.text}\` followed by \`${again.text}\` (${ctx.where(again.startPosition.row)}) does not reset CUDA`,
        framework,
        again,
        hits.every((h) => h !== null),
      );
    }
    for (const call of ctx.model.nodesOfType("call")) {
      if (!call) continue;
      const fn = call.childForFieldName("function");
      if (
        fn?.type !== "attribute" ||
        fn.childForFieldName("attribute")?.text !== "pop" ||
        ctx.model.resolve(fn.childForFieldName("object")) !== "sys.modules"
      )
        continue;
      const framework = frameworkOf(stringValue(callArgs(call).positional[0]));
      if (!framework) continue;
      const again = reimportAfter(framework, call.endIndex);
      if (!again) continue;
      const stmt = statementOf(call);
      report(
        ctx,
        stmt,
        `\`${call.text}\` followed by \`${again.text}\` (${ctx.where(again.startPosition.row)}) does not reset CUDA`,
        framework,
        again,
        onlyThis(stmt, call),
      );
    }
  },
};

/** The framework a `del` target removes: `sys.modules["torch..."]` or a name bound to the framework by an import. */
function deletedFramework(ctx: RuleContext, target: SyntaxNode): string | null {
  if (target.type === "subscript" && ctx.model.resolve(target.childForFieldName("value")) === "sys.modules") {
    return frameworkOf(stringValue(target.childForFieldName("subscript")));
  }
  // `del torch` only unbinds a name. It is an attempted reset only for the framework's own top-level
  // module (`import torch ... del torch`); `import jax.numpy as _jnp; del _jnp` is namespace hygiene
  // (a common pattern on real code), as is deleting any submodule or imported member.
  if (target.type === "identifier") {
    const path = ctx.model.symbols.get(target.text) ?? null;
    return path && FRAMEWORKS.includes(path) ? path : null;
  }
  return null;
}

/** Whether the statement does nothing but this call (alone, or assigned back: `torch = importlib.reload(torch)`). */
function onlyThis(stmt: SyntaxNode, call: SyntaxNode): boolean {
  if (stmt.type !== "expression_statement" || stmt.namedChildren.length !== 1) return false;
  const e = stmt.namedChildren[0]!;
  return e.id === call.id || (e.type === "assignment" && e.childForFieldName("right")?.id === call.id);
}

function report(
  ctx: RuleContext,
  stmt: SyntaxNode,
  what: string,
  framework: string,
  again: SyntaxNode | null,
  removable: boolean,
): void {
  // A startup variable written after CUDA started (GPU001's case): the re-import is meant to make it count.
  const startup = envWrites(ctx.model)
    .filter(
      (w) =>
        STARTUP_VARIABLES.includes(w.variable) &&
        w.range.start.line < stmt.startPosition.row &&
        stateBefore(ctx.model, w).frozenBy,
    )
    .pop();
  const related: RelatedInfo[] = again
    ? [
        {
          range: nodeRange(again),
          message: `${framework} is imported again here: it is the same process, with the same CUDA state`,
        },
      ]
    : [];
  const edit = removable ? removeStatement(ctx.model, stmt) : null;
  const fix: Fix | undefined = edit
    ? {
        title: "Remove it (restart the process with the variable set instead)",
        edits: [edit],
        safe: false,
        note: "Set the variable before the process starts: GPU Pilot's run command, or `CUDA_VISIBLE_DEVICES=1 python script.py`.",
      }
    : undefined;
  ctx.report({
    range: nodeRange(stmt),
    message: `${what}: the CUDA driver and ${framework}'s device state belong to the process, so ${startup ? `${startup.variable} set at ${ctx.where(startup.range.start.line)} still has no effect` : "startup variables changed now still have no effect"}; restart the process with the variable set`,
    related,
    ...(fix ? { fix } : {}),
  });
}
