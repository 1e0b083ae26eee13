/**
 * Issue 18 item 7: safe fixes that CPython rejects although tree-sitter's error recovery accepts
 * them, and safe fixes that turn working code into a runtime error. Every fixed text here is
 * compiled with the local python3 (`compile(..., "exec")`, the step `python3 -m py_compile` runs).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixParsesCleanly, initEngine, lintPython, type LintOptions } from "../../../../server/src/engine/lint";
import type { PythonRule } from "../../../../server/src/engine/rule";
import { ruleByCode } from "../../../../server/src/engine/rules/index";
import { fixAllPython } from "../../../../server/src/engine/fixAll";
import { fixAllManifest, lintManifest } from "../../../../server/src/engine/manifests/lintManifest";
import { applyEdits } from "../../../../server/src/engine/fixes";
import { lineStructureError } from "../../../../common/src/python/lineStructure";

/** CPython's verdict on each text: null when it compiles, else "ExceptionName: message". */
async function cpython(texts: string[]): Promise<Array<string | null>> {
  const script = [
    "import json, sys",
    "out = []",
    "for t in json.load(sys.stdin):",
    "    try:",
    "        compile(t.encode('utf-8'), 'x.py', 'exec', dont_inherit=True)",
    "        out.append(None)",
    "    except (SyntaxError, ValueError) as e:",
    "        out.append(type(e).__name__ + ': ' + str(getattr(e, 'msg', e)) + ' (line ' + str(getattr(e, 'lineno', None)) + ')')",
    "print(json.dumps(out))",
  ].join("\n");
  const { execa } = await import("execa");
  const r = await execa("python3", ["-c", script], { input: JSON.stringify(texts) });
  return JSON.parse(r.stdout) as Array<string | null>;
}

/** Each fix of `text` applied alone, plus fix-all's text. */
function fixedTexts(text: string, options: LintOptions): string[] {
  const r = lintPython(text, options);
  r.tree?.delete();
  return [
    ...r.diagnostics.filter((d) => d.fix).map((d) => applyEdits(text, d.fix!.edits)),
    fixAllPython(text, options).text,
  ];
}

// A write that continues the line above through a backslash, at an indentation of its own:
// inserting a line above it joins the inserted line to the continued one, and the write then
// starts a logical line at a level that matches no block (CPython: IndentationError).
const CONTINUED = 'import os\nif True:\n    y = 0; \\\n  os.environ["CUDA_VISIBLE_DEVICES"] = "1"\nprint(y)\n';
// A tab-indented block whose only statement is a write after `import torch`: the move fix leaves `pass`.
const TABBED =
  'import os\nimport torch\nif True:\n\tif os.getuid():\n\t\tos.environ["CUDA_VISIBLE_DEVICES"] = "1"\ntorch.zeros(1)\n';

test("GPU006's insert after a backslash continuation: every fix and fix-all still compile with CPython (issue 18 item 7)", async () => {
  await initEngine();
  assert.deepEqual(await cpython([CONTINUED]), [null], "the original compiles");
  const texts = fixedTexts(CONTINUED, { preview: true });
  assert.deepEqual(
    await cpython(texts),
    texts.map(() => null),
    texts.join("\n----\n"),
  );
});

test("the move fix in a tab-indented block leaves `pass` with the block's own indentation (issue 18 item 7)", async () => {
  await initEngine();
  assert.deepEqual(await cpython([TABBED]), [null]);
  const r = lintPython(TABBED, { preview: true });
  r.tree?.delete();
  const move = r.diagnostics.find((d) => d.code === "GPU002" && d.fix?.title.startsWith("Move"));
  assert.ok(move, "GPU002 offers the move");
  const fixed = applyEdits(TABBED, move.fix!.edits);
  assert.equal(
    fixed,
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\nif True:\n\tif os.getuid():\n\t\tpass\ntorch.zeros(1)\n',
  );
  assert.deepEqual(await cpython(fixedTexts(TABBED, { preview: true })), [null, null, null]);
});

test("GPU015: os.putenv with bytes has no safe fix to os.environ (a TypeError); with str it has (issue 18 item 7)", async () => {
  await initEngine();
  const bytes = lintPython(
    'import os\nos.putenv(b"CUDA_VISIBLE_DEVICES", b"1")\nimport torch\n',
    {},
  ).diagnostics.filter((d) => d.code === "GPU015");
  assert.equal(bytes.length, 1);
  assert.notEqual(bytes[0].fix?.safe, true, "os.environ[b'...'] = b'1' raises TypeError: str expected, not bytes");
  const mixed = lintPython('import os\nos.putenv("CUDA_VISIBLE_DEVICES", b"1")\nimport torch\n', {}).diagnostics.filter(
    (d) => d.code === "GPU015",
  );
  assert.notEqual(mixed[0].fix?.safe, true);
  const str = lintPython('import os\nos.putenv("CUDA_VISIBLE_DEVICES", "1")\nimport torch\n', {}).diagnostics.filter(
    (d) => d.code === "GPU015",
  );
  assert.equal(str[0].fix?.safe, true);
  assert.equal(str[0].fix?.edits[0].newText, 'os.environ["CUDA_VISIBLE_DEVICES"] = "1"');
});

test("GPU020: a quoted count is rewritten digit for digit, never through a double (issue 18 item 7)", async () => {
  const compose = (count: string) =>
    `services:\n  train:\n    image: x\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: ${count}\n              capabilities: [gpu]\n`;
  assert.equal(
    fixAllManifest(compose('"12345678901234567890123"'), "compose", {}).text,
    compose("12345678901234567890123"),
  );
  assert.equal(fixAllManifest(compose('"0002"'), "compose", {}).text, compose("2"));
  const d = lintManifest(compose('"9007199254740993"'), "compose", {}).diagnostics.find((x) => x.code === "GPU020");
  assert.match(d!.message, /write count: 9007199254740993$/);
});

// The line-structure check agrees with CPython on what the tokenizer (indentation, continuation)
// and the block rule (`:` NEWLINE INDENT) decide.
const CASES: string[] = [
  "x = 1\n",
  "if x:\n    y\n",
  "if x:\n\ty\n",
  "if x:\n    y\n  z\n", // unindent does not match
  "if x:\n        y\n\tz\n", // 8 spaces then a tab: same column at tab size 8, not at 1 (TabError)
  "if x:\n\ty\n        z\n",
  "if x:\n  \ty\n\tz\n", // 2 spaces + tab = tab at size 8; at size 1 3 vs 1
  "if x:\n    y\n        z\n", // unexpected indent
  "  x = 1\n", // unexpected indent at the top
  "if x:\ny\n", // expected an indented block
  "if x:\n# c\n\n    y\n", // comments and blank lines do not count
  "x = (1,\n  2)\ny = 3\n", // brackets: the inner line's indentation is ignored
  "x = 1 + \\\n      2\ny = 3\n", // a backslash continues the line
  "if x:\n    y = 0; \\\n  z = 1\n", // continued: z's indentation is ignored
  "if x:\n    y = 0; \\\n  z = 1\n  w = 2\n", // w: unindent does not match
  "s = '''\n  a\n'''\nt = 1\n",
  's = """a\\\n  b"""\nt = 1\n',
  "s = 'a\\\n  b'\nt = 1\n",
  "s = 'it''s' # a ' here\nt = 1\n",
  "d = {'a': 1,\n   'b': [2,\n 3]}\nif d:\n    pass\n",
  'f = f"{x["a"]:>{w}}"\nif f:\n    pass\n', // PEP 701 (3.12); a syntax error in 3.11, not a line-structure one
  "f = f'{x:\\'>10}'\n",
  "f = f'''{\nx\n}'''\ny = 1\n",
  "f = rb'\\'' \nif f:\n    pass\n",
  "x = 1 \\ # no\ny = 2\n",
  "if x:  # c\n    pass\nelse:\n    pass\n",
  "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n",
  "if x:\n\n    \n    y\n",
  "\fif x:\n    y\n",
  "if x:\n    y\n\f  z\n",
  "x = [\n\t1,\n        2]\n", // inside brackets tabs and spaces may mix
  "if x: \\\n    y\n", // backslash after the colon: the same logical line
  "if True:\n    pass\n  # comment at another level\n",
  "if x:\n    pass\n \\\n\n", // a backslash alone on a line
  "x = 1 \\\n",
  "def f(\n    a,\n):\n    pass\n",
  "match x:\n    case 1:\n        pass\n",
  "lambda: (\n  1)\n",
  "if x:\n    y = {\n  }\n    z = 1\n",
];

test("lineStructureError agrees with CPython's tokenizer and block rule on every case", async () => {
  const verdicts = await cpython(CASES);
  for (const [i, src] of CASES.entries()) {
    const cp = verdicts[i];
    const mine = lineStructureError(src);
    // CPython names the statement a block is missing after ("... after 'if' statement on line 1").
    const cpLine =
      cp && /^(IndentationError|TabError)/.test(cp) ? cp.replace(/ after '.*' statement on line \d+/, "") : null;
    assert.equal(
      mine === null ? null : `${mine.kind}: ${mine.message} (line ${mine.line + 1})`,
      cpLine,
      `case ${i}: ${JSON.stringify(src)} (CPython: ${cp})`,
    );
  }
});

// A rule made for this test, so that the engine's check is seen to work whatever the real rules'
// fixes do: GPU094 reports MARK with a safe fix that puts a line (with MARK's indentation) above it.
const meta = (code: string) => ({ ...(ruleByCode("GPU001") as PythonRule).meta, code, name: `test-${code}` });
const insertRule = (line: string): PythonRule => ({
  meta: meta("GPU094") as PythonRule["meta"],
  check(ctx) {
    ctx.model.text.split("\n").forEach((l, row) => {
      const k = l.indexOf("MARK");
      if (k < 0) return;
      const at = { line: row, character: 0 };
      ctx.report({
        range: { start: { line: row, character: k }, end: { line: row, character: k + 4 } },
        message: "MARK",
        fix: {
          title: "insert",
          safe: true,
          edits: [{ range: { start: at, end: at }, newText: `${line.replace("$INDENT", l.slice(0, k))}\n` }],
        },
      });
    });
  },
});

test("the engine drops a fix whose text CPython's line structure rejects, where tree-sitter sees no new error (issue 18 item 7)", async () => {
  await initEngine();
  const cases: Array<[string, string]> = [
    ["if True:\n    y = 0; \\\n  MARK = 1\nprint(y)\n", "$INDENTz = 2"], // the inserted line joins the continued one
    ["if True:\n\tif y:\n\t\tMARK = 1\nprint(y)\n", "        z = 2"], // 8 spaces where the block has two tabs
    ["if True:\n    MARK = 1\n", "        z = 2"], // unexpected indent
  ];
  for (const [src, ins] of cases) {
    const options = { rules: [insertRule(ins)], noPrefilter: true };
    const fix = {
      title: "insert",
      safe: true,
      edits: [
        {
          range: {
            start: { line: src.split("\n").findIndex((l) => l.includes("MARK")), character: 0 },
            end: { line: src.split("\n").findIndex((l) => l.includes("MARK")), character: 0 },
          },
          newText: `${ins.replace("$INDENT", "  ")}\n`,
        },
      ],
    };
    const broken = applyEdits(src, fix.edits);
    const [before, after] = await cpython([src, broken]);
    assert.equal(before, null, src);
    assert.match(after ?? "", /^(IndentationError|TabError)/, `CPython rejects ${JSON.stringify(broken)}`);
    const r = lintPython(src, options);
    r.tree?.delete();
    assert.equal(r.diagnostics.length, 1);
    assert.equal(r.diagnostics[0].fix, undefined, `no fix offered for ${JSON.stringify(src)}`);
    assert.equal(fixParsesCleanly(src, fix), false);
    assert.deepEqual(fixAllPython(src, options), { text: src, applied: 0 });
  }
  // The same insert where CPython takes it is kept.
  const fine = lintPython("if True:\n    MARK = 1\n", { rules: [insertRule("$INDENTz = 2")], noPrefilter: true });
  fine.tree?.delete();
  assert.equal(fine.diagnostics[0].fix?.edits[0].newText, "    z = 2\n");
  assert.equal(
    fixAllPython("if True:\n    MARK = 1\n", { rules: [insertRule("$INDENTz = 2")], noPrefilter: true }).applied,
    10,
    "kept: one insert per pass (the rule fires again)",
  );
});

test("fixParsesCleanly with the editor's kept trees (in chunks) agrees with a whole parse, for every fix on the fixtures and for fixes that break the code", async () => {
  await initEngine();
  const { filesUnder, ROOT } = await import("../../support/helpers");
  const { join } = await import("node:path");
  const { readFileSync } = await import("node:fs");
  const { ModuleTrees } = await import("../../../../server/src/engine/python/moduleTrees");
  const { pythonInput } = await import("../../../../server/src/engine/python/parser");
  let checked = 0,
    refused = 0;
  for (const f of filesUnder(join(ROOT, "test", "fixtures", "rules"), (n) => n.endsWith(".py"))) {
    const text = readFileSync(f, "utf8");
    const r = lintPython(text, { preview: true, lazyFixValidation: true });
    r.tree?.delete();
    const trees = ModuleTrees.parse(pythonInput(text), true);
    try {
      for (const d of r.diagnostics) {
        if (!d.fix) continue;
        const at = d.fix.edits[0].range.start;
        const broken = {
          ...d.fix,
          edits: [
            ...d.fix.edits,
            {
              range: { start: { line: at.line, character: 0 }, end: { line: at.line, character: 0 } },
              newText: "x = (\n",
            },
          ],
        };
        for (const fix of [d.fix, broken]) {
          const whole = fixParsesCleanly(text, fix);
          assert.equal(
            fixParsesCleanly(text, fix, false, trees),
            whole,
            `${f}: ${d.code} ${fix === broken ? "(broken)" : ""}`,
          );
          checked++;
          if (!whole) refused++;
        }
      }
    } finally {
      trees.delete();
    }
  }
  assert.ok(checked > 200 && refused > 80, `${checked} fixes checked, ${refused} refused`);
});
