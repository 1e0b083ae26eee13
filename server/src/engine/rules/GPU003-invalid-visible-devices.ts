import type { PythonRule, RuleContext } from "../rule";
import { envWrites } from "../rule";
import type { ModuleModel } from "../python/model";
import type { EnvWriteEvent } from "../python/events";
import { nodeRange } from "../python/events";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { parseVisibleDevices } from "../visibleDevices";
import { cudaUsedAfter } from "../python/timeline";

/** GPU003: a CUDA_VISIBLE_DEVICES value that is not a string, repeats an id, stops parsing early, or hides every GPU before CUDA use. */
export const rule: PythonRule = {
  meta: {
    code: "GPU003",
    name: "invalid-visible-devices",
    severity: "error",
    fixable: true,
    fixSafety: "safe",
    // A CUDA_VISIBLE_DEVICES write, by name (TextProbe.envWith).
    trigger: (t) => t.envWith(["CUDA_VISIBLE_DEVICES"]),
    docs: {
      what: 'Checks the value written to CUDA_VISIBLE_DEVICES: a non-string (int, list, tuple, an `argparse` argument declared `type=int`), a repeated id, a malformed or negative id followed by more ids, and `""`/`"-1"` in a file that then uses CUDA. Computed values it can work out are checked too: `",".join(...)` of literal ids (`",".join(map(str, [1, 1]))` is `"1,1"`), and `str()` of a list, a tuple or an `argparse` argument declared with `nargs` (a list), which gives `"[0, 1]"`.',
      follows:
        'The CUDA_VISIBLE_DEVICES writes of the module\'s code in the order it runs (top level, `if __name__ == "__main__":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module\'s own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep; the written value as written, with integers and the lists given to `",".join(...)` or `str(...)` looked up through names assigned in the file (`ids = [1, 1]`) and the file\'s `argparse` declarations; for `""` and `"-1"`, the CUDA work that runs after the write in the same order. Not followed: writes in functions the module never calls, values that come from function parameters, return values or other modules, and CUDA work in other modules.',
      why: 'Measured on 2 x H200 (ground-truth.md, \'How CUDA parses CUDA_VISIBLE_DEVICES\'): `os.environ[...] = 1` raises `TypeError: str expected, not int` at the assignment; `"0,0"` hides every GPU (0 devices, the first CUDA use raises); CUDA stops parsing at the first id it cannot use, so `"0,-1,1"` leaves only GPU 0; `""` and `"-1"` hide all GPUs and `is_available()` is False. Measured on 1 x H200, torch 2.11 (docs/ground-truth.md, \'CUDA_VISIBLE_DEVICES values\'): `"[0, 1]"` and `"[0]"` (what `str()` of a Python list gives), `"(0)"` and `"\'0\'"` give 0 devices: the first entry does not start with a digit.',
      example:
        'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = 1        # TypeError\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,0"    # hides every GPU\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = str(1)\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
      whenNotToCare:
        '`""` or `"-1"` on purpose, to force a CPU run, in a file that does not touch CUDA afterwards (the rule stays silent there). TensorFlow and JAX work after it is not counted: with no visible GPU they run on the CPU.',
      references: [
        "ground-truth.md: 'How CUDA parses CUDA_VISIBLE_DEVICES'",
        'docs/ground-truth.md, \'CUDA_VISIBLE_DEVICES values\' (verify/results-frameworks-h200.json): "[0, 1]" → 0 devices, "1,1" → 0',
        "CUDA C Programming Guide: CUDA_VISIBLE_DEVICES",
      ],
    },
  },
  check(ctx) {
    for (const w of envWrites(ctx.model)) {
      if (w.variable !== "CUDA_VISIBLE_DEVICES") continue;
      if (w.value && w.form !== "putenv") checkType(ctx, w, w.value);
      if (w.literal !== null) checkLiteral(ctx, w, w.literal, `"${w.literal}"`);
      else if (w.value) checkComputed(ctx, w, w.value);
    }
  },
};

/** Integer-valued expressions: literals, `int(...)`, `len(...)`, names bound to those, argparse `type=int` args. */
function intLike(model: ModuleModel, node: SyntaxNode, depth = 0): boolean {
  if (depth > 3) return false;
  switch (node.type) {
    case "integer":
      return true;
    case "unary_operator":
      return node.namedChildren[0]?.type === "integer";
    case "call": {
      const fn = node.childForFieldName("function");
      return fn?.type === "identifier" && (fn.text === "int" || fn.text === "len");
    }
    case "identifier": {
      const v = model.valueOf(node.text, node.startIndex);
      return v ? intLike(model, v, depth + 1) : false;
    }
    case "attribute": {
      const obj = node.childForFieldName("object");
      const attr = node.childForFieldName("attribute")?.text;
      return !!obj && !!attr && argparseIntDest(model, attr);
    }
    default:
      return false;
  }
}

/** Whether some `add_argument("--name", type=int)` declares destination `dest`. */
function argparseIntDest(model: ModuleModel, dest: string): boolean {
  for (const call of model.nodesOfType("call")) {
    const fn = call?.childForFieldName("function");
    if (!call || fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "add_argument") continue;
    const args = call.childForFieldName("arguments")?.namedChildren ?? [];
    let name: string | null = null;
    let isInt = false;
    let explicitDest: string | null = null;
    for (const a of args) {
      if (!a) continue;
      if (a.type === "string" && name === null) name = (stringValue(a) ?? "").replace(/^-+/, "").replace(/-/g, "_");
      if (a.type === "keyword_argument") {
        const k = a.childForFieldName("name")?.text;
        const v = a.childForFieldName("value");
        if (k === "type" && v?.text === "int") isInt = true;
        if (k === "dest") explicitDest = stringValue(v);
      }
    }
    if (isInt && (explicitDest ?? name) === dest) return true;
  }
  return false;
}

function checkType(ctx: RuleContext, w: EnvWriteEvent, value: SyntaxNode): void {
  const isSeq = value.type === "list" || value.type === "tuple";
  const isNum = value.type === "float" || intLike(ctx.model, value);
  if (!isSeq && !isNum) return;
  const what = isSeq ? `a ${value.type}` : "an int";
  // A literal becomes the string it means (`1` → `"1"`, not `str(1)`, which reads worse); other values are converted.
  const literalInts = isSeq && value.namedChildren.every((c) => c?.type === "integer");
  const replacement =
    value.type === "integer"
      ? `"${value.text}"`
      : literalInts
        ? `"${value.namedChildren.map((c) => c!.text).join(",")}"`
        : isSeq
          ? `",".join(map(str, ${value.text}))`
          : `str(${value.text})`;
  ctx.report({
    range: w.range,
    message: `CUDA_VISIBLE_DEVICES is given ${what} (${value.text}): os.environ only takes strings, so this raises TypeError: str expected`,
    fix: {
      title: `Convert to a string: ${replacement}`,
      edits: [{ range: nodeRange(value), newText: replacement }],
      safe: true,
    },
  });
}

/**
 * A computed value GPU003 can work out: `",".join(LIST)` of literal ids (`map(str, [1, 1])`, a list
 * of strings, `str(i) for i in [...]`), names bound to those; or `str(X)` of a list/tuple, or of an
 * argparse argument declared with `nargs` (a list at run time), whose text starts with `[`/`(`.
 * @returns the joined text, `{ listRepr }` with the `str()` argument, or null.
 */
export function computedVisibleValue(
  model: ModuleModel,
  node: SyntaxNode,
): { text: string } | { listRepr: SyntaxNode } | null {
  if (node.type !== "call") return null;
  const fn = node.childForFieldName("function");
  const argNode = node.childForFieldName("arguments");
  // `f(x for x in xs)`: the generator expression is the call's arguments node itself.
  const args =
    argNode?.type === "generator_expression"
      ? [argNode]
      : (argNode?.namedChildren ?? []).filter((a): a is SyntaxNode => !!a && a.type !== "comment");
  if (fn?.type === "identifier" && fn.text === "str" && args.length === 1) {
    const a = literalSeq(model, args[0]) ?? args[0];
    if (a.type === "list" || a.type === "tuple" || a.type === "list_comprehension") return { listRepr: args[0] };
    if (a.type === "attribute" && argparseListDest(model, a.childForFieldName("attribute")?.text ?? ""))
      return { listRepr: args[0] };
    return null;
  }
  if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "join" || args.length !== 1) return null;
  const sep = stringValue(fn.childForFieldName("object"));
  if (sep === null) return null;
  const ids = idTexts(model, args[0]);
  return ids ? { text: ids.join(sep) } : null;
}

/** A list/tuple literal `node` is (or a name bound to one, one level), else null. */
function literalSeq(model: ModuleModel, node: SyntaxNode): SyntaxNode | null {
  if (node.type === "list" || node.type === "tuple") return node;
  if (node.type === "identifier") {
    const v = model.valueOf(node.text, node.startIndex);
    if (v && (v.type === "list" || v.type === "tuple")) return v;
  }
  return null;
}

/** The id texts a join argument yields: a literal list of strings or ints under `map(str, ...)` / `str(i) for i in ...`. */
function idTexts(model: ModuleModel, arg: SyntaxNode): string[] | null {
  const elems = (seq: SyntaxNode | null, asStr: boolean): string[] | null => {
    if (!seq) return null;
    const out: string[] = [];
    for (const c of seq.namedChildren) {
      if (!c) return null;
      if (c.type === "integer" && asStr) out.push(String(Number(c.text)));
      else if (c.type === "string" && stringValue(c) !== null) out.push(stringValue(c)!);
      else return null;
    }
    return out;
  };
  const seq = literalSeq(model, arg);
  if (seq) return elems(seq, false);
  if (arg.type === "call") {
    const f = arg.childForFieldName("function");
    const a = (arg.childForFieldName("arguments")?.namedChildren ?? []).filter(
      (x): x is SyntaxNode => !!x && x.type !== "comment",
    );
    if (f?.type === "identifier" && f.text === "map" && a.length === 2 && a[0].text === "str")
      return elems(literalSeq(model, a[1]), true);
  }
  if (arg.type === "generator_expression" || arg.type === "list_comprehension") {
    const body = arg.childForFieldName("body");
    const clause = arg.namedChildren.find((c) => c?.type === "for_in_clause");
    const loopVar = clause?.childForFieldName("left")?.text;
    const bodyArgs = body?.type === "call" ? (body.childForFieldName("arguments")?.namedChildren ?? []) : [];
    if (
      clause &&
      arg.namedChildren.filter((c) => c?.type === "for_in_clause" || c?.type === "if_clause").length === 1 &&
      body?.type === "call" &&
      body.childForFieldName("function")?.text === "str" &&
      bodyArgs.length === 1 &&
      bodyArgs[0]?.text === loopVar
    ) {
      return elems(literalSeq(model, clause.childForFieldName("right") ?? arg), true);
    }
  }
  return null;
}

/** Whether some `add_argument("--name", nargs=...)` (other than `nargs="?"`) declares destination `dest`: its value is a list. */
function argparseListDest(model: ModuleModel, dest: string): boolean {
  if (!dest) return false;
  for (const call of model.nodesOfType("call")) {
    const fn = call?.childForFieldName("function");
    if (!call || fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "add_argument") continue;
    let name: string | null = null;
    let list = false;
    let explicitDest: string | null = null;
    for (const a of call.childForFieldName("arguments")?.namedChildren ?? []) {
      if (!a) continue;
      if (a.type === "string" && name === null) name = (stringValue(a) ?? "").replace(/^-+/, "").replace(/-/g, "_");
      if (a.type === "keyword_argument") {
        const k = a.childForFieldName("name")?.text;
        const v = a.childForFieldName("value");
        if (k === "nargs" && v && (stringValue(v) === "+" || stringValue(v) === "*" || v.type === "integer"))
          list = true;
        if (k === "dest") explicitDest = stringValue(v);
      }
    }
    if (list && (explicitDest ?? name) === dest) return true;
  }
  return false;
}

function checkComputed(ctx: RuleContext, w: EnvWriteEvent, value: SyntaxNode): void {
  const c = computedVisibleValue(ctx.model, value);
  if (!c) return;
  if ("text" in c) {
    checkLiteral(ctx, w, c.text, `${value.text} (= "${c.text}")`);
    return;
  }
  const replacement = `",".join(map(str, ${c.listRepr.text}))`;
  ctx.report({
    range: w.range,
    message: `CUDA_VISIBLE_DEVICES is given ${value.text}, the text of a list ("[0, 1]"-like): CUDA cannot read an id from "[", so every GPU is hidden (measured: "[0, 1]" → 0 devices); join the ids: ${replacement}`,
    fix: {
      title: `Join the ids: ${replacement}`,
      edits: [{ range: nodeRange(value), newText: replacement }],
      safe: true,
    },
  });
}

/**
 * Whether CUDA work that needs a GPU follows the write: an initialising event of torch, CuPy or
 * Numba. TensorFlow and JAX are left out: with no visible GPU they place their work on the CPU and
 * run (TensorFlow's GPU guide; JAX falls back to the CPU backend unless JAX_PLATFORMS demands
 * cuda), which is why `CUDA_VISIBLE_DEVICES=""` before them is the usual way to keep them off the
 * GPU (ecosystem: bigscience-workshop/bigscience tb-rename-events.py).
 */
function needsCudaAfter(model: ModuleModel, w: EnvWriteEvent): boolean {
  if (!cudaUsedAfter(model, w)) return false;
  const after = model.events.slice(model.events.indexOf(w) + 1);
  return after.some((e) => e.kind === "init" && e.framework !== "tensorflow" && e.framework !== "jax");
}

function checkLiteral(ctx: RuleContext, w: EnvWriteEvent, value: string, shown: string): void {
  const parsed = parseVisibleDevices(value);
  const trimmed = value.trim();
  if (trimmed === "" || trimmed === "-1") {
    if (needsCudaAfter(ctx.model, w)) {
      ctx.report({
        range: w.range,
        severity: "warning",
        message: `CUDA_VISIBLE_DEVICES=${shown} hides every GPU, yet this file uses CUDA afterwards: torch.cuda.is_available() will be False and CUDA calls will fail`,
      });
    }
    return;
  }
  if (parsed.duplicate) {
    const ids = parsed.kept.map((e) => e.text);
    const dedup = ids.filter((t, i) => ids.indexOf(t) === i);
    const content = w.value?.namedChildren.find((c) => c?.type === "string_content");
    ctx.report({
      range: w.range,
      message: `CUDA_VISIBLE_DEVICES=${shown} repeats id ${parsed.duplicate.text}: a duplicate hides every GPU (0 devices; the first CUDA use raises)`,
      ...(content && w.value && content.parent?.id === w.value.id && !parsed.stop
        ? {
            fix: {
              title: `Drop the duplicate: "${dedup.join(",")}"`,
              edits: [{ range: nodeRange(content), newText: dedup.join(",") }],
              safe: true,
            },
          }
        : {}),
    });
    return;
  }
  if (parsed.stop) {
    const stop = parsed.stop;
    const after = parsed.entries
      .slice(parsed.entries.indexOf(stop) + 1)
      .map((e) => e.text)
      .filter(Boolean);
    const first = parsed.kept.length === 0;
    if (!first && after.length === 0 && stop.kind === "negative") return;
    const reason = stop.kind === "negative" ? "a negative id" : `a malformed id "${stop.text}"`;
    const effect = first
      ? "CUDA stops parsing there, so no GPU is visible"
      : `CUDA stops parsing there, so only ${parsed.kept.map((e) => e.text).join(",")} ${parsed.kept.length === 1 ? "stays" : "stay"} visible${after.length ? ` and ${after.join(",")} ${after.length === 1 ? "is" : "are"} dropped` : ""}`;
    ctx.report({ range: w.range, message: `CUDA_VISIBLE_DEVICES=${shown} contains ${reason}: ${effect}` });
  }
}
