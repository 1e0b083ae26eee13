/**
 * Issue 18 item 7: common/src/python/lineStructure.ts against CPython itself over real code. For every .py file
 * under the given folders: CPython's verdict (`compile(..., "exec")` with the local python3) and
 * lineStructureError's. Prints the files where they disagree: CPython compiles it and the check
 * reports an error (a valid fix would be dropped), or CPython raises IndentationError/TabError and
 * the check reports none (a bad fix could pass) or the same kind at another line (CPython's parser
 * raises "unexpected unindent" after a decorator, one line before the check's "unexpected indent").
 * With --mutate N, N mutated copies of sampled files are checked the same way instead (a line
 * inserted at another line's indentation or after a line ending in `\`, a line's leading spaces
 * turned into a tab or a tab into spaces), in memory: CPython's verdict on the mutant is the truth.
 * usage: node --import tsx bench/line-structure-corpus.ts [--mutate N] FOLDER...
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { lineStructureError } from "../common/src/python/lineStructure";

function* pyFiles(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* pyFiles(p);
    else if (e.isFile() && e.name.endsWith(".py") && statSync(p).size < 4 << 20) yield p;
  }
}

async function main(): Promise<void> {
  const { execa } = await import("execa");
  const args = process.argv.slice(2);
  const m = args.indexOf("--mutate");
  const mutants = m >= 0 ? Number(args.splice(m, 2)[1]) : 0;
  const all = args.flatMap((d) => [...pyFiles(d)]);
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const texts: string[] = [];
  const files: string[] = [];
  if (mutants) {
    while (texts.length < mutants) {
      const f = all[rnd(all.length)];
      const lines = readFileSync(f, "utf8").split("\n");
      if (lines.length < 3) continue;
      const at = rnd(lines.length - 1);
      const indent = (l: string) => /^[ \t]*/.exec(l)![0];
      const kind = rnd(4);
      if (kind === 0) lines.splice(at, 0, `${indent(lines[rnd(lines.length)])}x = 1`);
      else if (kind === 1) {
        const k = lines.findIndex((l, i) => i >= at && l.endsWith("\\"));
        if (k < 0) continue;
        lines.splice(k + 1, 0, `${indent(lines[k])}x = 1`);
      } else if (kind === 2) {
        if (!lines[at].startsWith("    ")) continue;
        lines[at] = "\t" + lines[at].slice(4);
      } else {
        if (!lines[at].startsWith("\t")) continue;
        lines[at] = " ".repeat(1 + rnd(8)) + lines[at].slice(1);
      }
      texts.push(lines.join("\n"));
      files.push(`${f} (mutant ${texts.length})`);
    }
  } else
    for (const f of all) {
      files.push(f);
      texts.push(readFileSync(f, "utf8"));
    }
  const script = [
    "import json, sys",
    "out = []",
    "for t in json.load(sys.stdin):",
    "    try:",
    "        compile(t.encode('utf-8', 'surrogatepass'), 'x.py', 'exec', dont_inherit=True)",
    "        out.append(None)",
    "    except (SyntaxError, ValueError) as e:",
    "        out.append([type(e).__name__, getattr(e, 'lineno', None)])",
    "print(json.dumps(out))",
  ].join("\n");
  const r = await execa("python3", ["-c", script], { input: JSON.stringify(texts), maxBuffer: 256 << 20 });
  const verdicts = JSON.parse(r.stdout) as Array<[string, number | null] | null>;
  let otherLine = 0,
    compiled = 0,
    indentErrors = 0,
    otherErrors = 0,
    falseAlarms = 0,
    misses = 0,
    ms = 0,
    bytes = 0;
  files.forEach((f, k) => {
    const text = texts[k];
    bytes += text.length;
    const t = performance.now();
    const mine = lineStructureError(text);
    ms += performance.now() - t;
    const cp = verdicts[k];
    if (cp === null) {
      compiled++;
      if (mine) {
        falseAlarms++;
        console.log(`false alarm ${f}:${mine.line + 1}: ${mine.kind}: ${mine.message}`);
      }
    } else if (cp[0] === "IndentationError" || cp[0] === "TabError") {
      indentErrors++;
      if (mine && mine.kind === cp[0] && mine.line + 1 !== cp[1]) {
        otherLine++;
        console.log(`other line ${f}: CPython ${cp[0]} line ${cp[1]}, check ${mine.message} line ${mine.line + 1}`);
      } else if (!mine || mine.kind !== cp[0]) {
        misses++;
        console.log(
          `miss ${f}: CPython ${cp[0]} line ${cp[1]}, check ${mine ? `${mine.kind} ${mine.message} line ${mine.line + 1}` : "none"}`,
        );
        if (process.env.SHOW) console.log(JSON.stringify(text.split("\n").slice((cp[1] ?? 1) - 4, (cp[1] ?? 1) + 2)));
      }
    } else otherErrors++;
  });
  console.log(
    `${files.length} files (${(bytes / 1e6).toFixed(1)} M chars): CPython compiles ${compiled}, IndentationError/TabError ${indentErrors}, other errors ${otherErrors}; check: ${falseAlarms} false alarms, ${misses} misses (none or another kind), ${otherLine} at another line; ${ms.toFixed(0)} ms in lineStructureError`,
  );
}

void main();
