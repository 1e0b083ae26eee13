import type { Rule, RuleContext } from "../rule";
import { envWrites } from "../rule";
import type { EnvWriteEvent, ModuleModel } from "../python/model";
import { nodeRange } from "../python/model";
import type { SyntaxNode } from "../python/parser";
import { stringValue } from "../python/parser";
import { parseVisibleDevices } from "../visibleDevices";
import { cudaUsedAfter } from "../python/timeline";

/** GPU003: a CUDA_VISIBLE_DEVICES value that is not a string, repeats an id, stops parsing early, or hides every GPU before CUDA use. */
export const rule: Rule = {
  meta: {
    code: "GPU003",
    name: "invalid-visible-devices",
    severity: "error",
    fixable: true,
    docs: {
      what: "Checks the value written to CUDA_VISIBLE_DEVICES: a non-string (int, list, tuple, an `argparse` argument declared `type=int`), a repeated id, a malformed or negative id followed by more ids, and `\"\"`/`\"-1\"` in a file that then uses CUDA.",
      why: "Measured on 2 x H200 (ground-truth.md, 'How CUDA parses CUDA_VISIBLE_DEVICES'): `os.environ[...] = 1` raises `TypeError: str expected, not int` at the assignment; `\"0,0\"` hides every GPU (0 devices, the first CUDA use raises); CUDA stops parsing at the first id it cannot use, so `\"0,-1,1\"` leaves only GPU 0; `\"\"` and `\"-1\"` hide all GPUs and `is_available()` is False.",
      example: "import os\n\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = 1        # TypeError\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0,0\"    # hides every GPU\n",
      fix: "import os\n\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = str(1)\nos.environ[\"CUDA_VISIBLE_DEVICES\"] = \"0\"\n",
      whenNotToCare: "`\"\"` or `\"-1\"` on purpose, to force a CPU run, in a file that does not touch CUDA afterwards (the rule stays silent there).",
      references: ["ground-truth.md: 'How CUDA parses CUDA_VISIBLE_DEVICES'", "CUDA C Programming Guide: CUDA_VISIBLE_DEVICES"],
    },
  },
  check(ctx) {
    for (const w of envWrites(ctx.model)) {
      if (w.variable !== "CUDA_VISIBLE_DEVICES") continue;
      if (w.value && w.form !== "putenv") checkType(ctx, w, w.value);
      if (w.literal !== null) checkLiteral(ctx, w);
    }
  },
};

/** Integer-valued expressions: literals, `int(...)`, `len(...)`, names bound to those, argparse `type=int` args. */
function intLike(model: ModuleModel, node: SyntaxNode, depth = 0): boolean {
  if (depth > 3) return false;
  switch (node.type) {
    case "integer": return true;
    case "unary_operator": return node.namedChildren[0]?.type === "integer";
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
    default: return false;
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
  // A literal becomes the string it means (`1` → `"1"`, not `str(1)`: issue 16); other values are converted.
  const literalInts = isSeq && value.namedChildren.every((c) => c?.type === "integer");
  const replacement = value.type === "integer" ? `"${value.text}"`
    : literalInts ? `"${value.namedChildren.map((c) => c!.text).join(",")}"`
    : isSeq ? `",".join(map(str, ${value.text}))` : `str(${value.text})`;
  ctx.report({
    range: w.range,
    message: `CUDA_VISIBLE_DEVICES is given ${what} (${value.text}): os.environ only takes strings, so this raises TypeError: str expected`,
    fix: { title: `Convert to a string: ${replacement}`, edits: [{ range: nodeRange(value), newText: replacement }], safe: true },
  });
}

function checkLiteral(ctx: RuleContext, w: EnvWriteEvent): void {
  const value = w.literal!;
  const parsed = parseVisibleDevices(value);
  const trimmed = value.trim();
  if (trimmed === "" || trimmed === "-1") {
    if (cudaUsedAfter(ctx.model, w)) {
      ctx.report({
        range: w.range, severity: "warning",
        message: `CUDA_VISIBLE_DEVICES="${value}" hides every GPU, yet this file uses CUDA afterwards: torch.cuda.is_available() will be False and CUDA calls will fail`,
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
      message: `CUDA_VISIBLE_DEVICES="${value}" repeats id ${parsed.duplicate.text}: a duplicate hides every GPU (0 devices; the first CUDA use raises)`,
      ...(content && w.value && content.parent?.id === w.value.id && !parsed.stop
        ? { fix: { title: `Drop the duplicate: "${dedup.join(",")}"`, edits: [{ range: nodeRange(content), newText: dedup.join(",") }], safe: true } }
        : {}),
    });
    return;
  }
  if (parsed.stop) {
    const stop = parsed.stop;
    const after = parsed.entries.slice(parsed.entries.indexOf(stop) + 1).map((e) => e.text).filter(Boolean);
    const first = parsed.kept.length === 0;
    if (!first && after.length === 0 && stop.kind === "negative") return;
    const reason = stop.kind === "negative" ? "a negative id" : `a malformed id "${stop.text}"`;
    const effect = first
      ? "CUDA stops parsing there, so no GPU is visible"
      : `CUDA stops parsing there, so only ${parsed.kept.map((e) => e.text).join(",")} stay visible${after.length ? ` and ${after.join(",")} ${after.length === 1 ? "is" : "are"} dropped` : ""}`;
    ctx.report({ range: w.range, message: `CUDA_VISIBLE_DEVICES="${value}" contains ${reason}: ${effect}` });
  }
}
