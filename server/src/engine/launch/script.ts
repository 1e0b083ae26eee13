/**
 * The Python script a launch command line names, read as text (GPU040, GPU042): where it is, and
 * what its own command-line options do with CUDA_VISIBLE_DEVICES. Text only, no parse: the answers
 * are null whenever the text is not of the plain shapes below.
 */
import { dirname, isAbsolute, join } from "node:path";

/**
 * A path under the running shell script's own folder, `rest` in group 1: `$(dirname "$0")/rest`,
 * `$(dirname "${BASH_SOURCE[0]}")/rest`, `` `dirname $0`/rest `` (bash(1), Special Parameters: "0
 * Expands to the name of the shell or shell script"), as mmdetection's and mmocr's
 * tools/dist_train.sh start `"$(dirname "$0")/train.py"`.
 */
export const SCRIPT_DIR =
  /^(?:\$\(\s*dirname\s+(?:"(?:\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\})"|\$0|\$\{0\}|\$\{BASH_SOURCE(?:\[0\])?\})\s*\)|`\s*dirname\s+"?\$0"?\s*`)\/(.*)$/;

/**
 * The text of a script named in a launch line: relative to the launching file's folder, then up to
 * three folders above it (a `$(dirname "$0")/` path: in the launching file's folder only); null when
 * not a readable `.py` path. `read`: how files are read (a manifest rule's ManifestRuleContext.read,
 * which records them as the result's dependencies).
 */
export function launchedScriptText(
  file: string | null,
  path: string,
  read: (path: string, maxBytes: number) => string | null,
): string | null {
  const own = file ? SCRIPT_DIR.exec(path) : null;
  if (own && !own[1].includes("$") && own[1].endsWith(".py"))
    return read(join(dirname(file!), own[1]), 4 * 1024 * 1024);
  if (!file || path.includes("$") || path.startsWith("~") || !path.endsWith(".py")) return null;
  const candidates = isAbsolute(path)
    ? [path]
    : [0, 1, 2, 3].map((k) => {
        let d = dirname(file);
        for (let i = 0; i < k; i++) d = dirname(d);
        return join(d, path);
      });
  for (const c of candidates) {
    const text = read(c, 4 * 1024 * 1024);
    if (text !== null) return text;
  }
  return null;
}

/** The text of a call's parentheses from `open` (the index of its `(`), strings skipped; null when unbalanced within 2,000 characters. */
function callText(text: string, open: number): string | null {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < Math.min(text.length, open + 2000); i++) {
    const ch = text[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return text.slice(open + 1, i);
  }
  return null;
}

/** A leading option string of an add_argument call's text: `"--device",` or `'-d'`. */
const OPTION_STRING = /^\s*(?:"(-[^"\\]*)"|'(-[^'\\]*)')\s*(?:,|$)/;

/**
 * The option strings of the script's `add_argument(...)` calls whose destination is `dest`
 * (argparse: `dest=` if given, else the first long option without its dashes, `-` turned into `_`).
 */
export function optionsWithDest(text: string, dest: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\badd_argument\s*\(/g)) {
    const body = callText(text, m.index + m[0].length - 1);
    if (body === null) continue;
    // The leading string arguments are the option strings.
    const names: string[] = [];
    let rest = body;
    for (let f = OPTION_STRING.exec(rest); f; f = OPTION_STRING.exec(rest)) {
      names.push(f[1] ?? f[2]);
      rest = rest.slice(f[0].length);
    }
    if (!names.length) continue;
    const explicit = /\bdest\s*=\s*["']([A-Za-z_][A-Za-z0-9_]*)["']/.exec(rest)?.[1];
    const long = names.find((n) => n.startsWith("--"));
    const implied = (long ?? names[0]).replace(/^-+/, "").replace(/-/g, "_");
    if ((explicit ?? implied) === dest) out.push(...names);
  }
  return out;
}

/**
 * The one CUDA_VISIBLE_DEVICES write of the script when it copies an argparse value:
 * `os.environ["CUDA_VISIBLE_DEVICES"] = args.device` → the options whose destination is `device`.
 * Null when the script writes the variable more than once, or from anything else.
 */
export function visibleFromOption(text: string): string[] | null {
  const writes = [...text.matchAll(/os\.environ\s*\[\s*["']CUDA_VISIBLE_DEVICES["']\s*\]\s*=(?!=)([^\n]*)/g)];
  if (writes.length !== 1) return null;
  const m = /^\s*[A-Za-z_][A-Za-z0-9_]*\.([A-Za-z_][A-Za-z0-9_]*)\s*(?:#.*)?$/.exec(writes[0][1]);
  if (!m) return null;
  const options = optionsWithDest(text, m[1]);
  return options.length ? options : null;
}
