/**
 * Device expressions: the places where code names a CUDA device ordinal. Used by GPU004 (ordinal
 * out of range), GPU017 (id not on this machine) and the machine-aware hover.
 */
import type { SyntaxNode } from "./parser";
import { stringValue } from "./parser";
import type { ModuleModel } from "./model";
import { cudaDeviceOrdinal, SET_DEVICE_PATHS } from "../frameworks";

/** One device ordinal written in code. */
export interface DeviceUse {
  /** The ordinal (0-based, among the visible devices). */
  ordinal: number;
  /** The node holding the number (a string `"cuda:1"` or an integer `1`). */
  node: SyntaxNode;
  /** How it was written, for messages: `"cuda:1"`, `torch.cuda.set_device(1)`, `device_ids=[0, 1]`. */
  form: string;
  /** Replaces the ordinal by another in the source text of `node`. */
  replace(ordinal: number): string;
}

function intValue(n: SyntaxNode | null | undefined): number | null {
  if (!n || n.type !== "integer") return null;
  const t = n.text;
  return [...t].every((c) => c >= "0" && c <= "9") ? Number(t) : null;
}

/**
 * Every literal device ordinal in the module (anywhere, not only on the timeline); with `within`,
 * only those in expressions that overlap those lines (0-based, inclusive; the editor's visible
 * range or a hovered line: no walk of the whole file).
 */
export function deviceUses(model: Pick<ModuleModel, "symbols" | "nodesOfType" | "resolve" | "frameworks" | "tree">, within?: { startLine: number; endLine: number }): DeviceUse[] {
  const out: DeviceUse[] = [];
  const nodes = (type: string): Array<SyntaxNode | null> => within
    ? model.tree.descendantsOfType(type, { row: within.startLine, column: 0 }, { row: within.endLine + 1, column: 0 })
    : model.nodesOfType(type);
  // Cheap text gate: every device expression names `cuda`/`device(s)`, or an alias imported from such a path.
  const words = ["cuda", "device"];
  for (const [name, path] of model.symbols) if (path.includes("cuda") || path.includes("device")) words.push(name);
  const mentions = (n: SyntaxNode) => { const t = n.text; return words.some((w) => t.includes(w)); };
  for (const s of nodes("string")) {
    if (!s || !s.text.includes("cuda")) continue;
    const v = stringValue(s);
    if (v === null) continue;
    const n = cudaDeviceOrdinal(v);
    if (n === null || n < 0) continue;
    out.push({ ordinal: n, node: s, form: `"${v}"`, replace: (k) => s.text.replace(/cuda:\s*\d+/, `cuda:${k}`) });
  }
  for (const call of nodes("call")) {
    if (!call || !mentions(call)) continue;
    const fn = call.childForFieldName("function");
    const args = call.childForFieldName("arguments")?.namedChildren.filter((a): a is SyntaxNode => !!a && a.type !== "comment") ?? [];
    const q = model.resolve(fn)?.replace(/\(\)/g, "") ?? null;
    const intArg = (a: SyntaxNode | undefined, form: string) => {
      const n = intValue(a);
      if (a && n !== null) out.push({ ordinal: n, node: a, form, replace: (k) => String(k) });
    };
    if (q === "torch.device" && args.length >= 2 && stringValue(args[0]) === "cuda") intArg(args[1], `torch.device("cuda", ${args[1].text})`);
    else if ((q !== null && SET_DEVICE_PATHS.includes(q)) || q === "torch.cuda.device") intArg(args[0], `${q}(${args[0]?.text ?? ""})`);
    else if (fn?.type === "attribute" && fn.childForFieldName("attribute")?.text === "cuda" && model.frameworks.has("torch") && q !== "torch.cuda") intArg(args[0], `.cuda(${args[0]?.text ?? ""})`);
    for (const a of args) {
      if (a.type !== "keyword_argument") continue;
      const name = a.childForFieldName("name")?.text;
      const value = a.childForFieldName("value");
      if (name === "device_ids" && value && (value.type === "list" || value.type === "tuple")) {
        for (const el of value.namedChildren) intArg(el ?? undefined, `device_ids=${value.text}`);
      } else if ((name === "device" || name === "output_device") && q?.startsWith("torch.")) {
        intArg(value ?? undefined, `${name}=${value?.text}`);
      }
    }
  }
  for (const sub of nodes("subscript")) {
    if (!sub) continue;
    const base = model.resolve(sub.childForFieldName("value"));
    if (base !== "jax.devices()" && base !== "jax.local_devices()") continue;
    const idx = sub.childForFieldName("subscript");
    const n = intValue(idx);
    if (idx && n !== null) out.push({ ordinal: n, node: idx, form: `${base}[${n}]`, replace: (k) => String(k) });
  }
  return out;
}
