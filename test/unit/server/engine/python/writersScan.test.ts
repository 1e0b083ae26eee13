/**
 * python/project.ts `writersOf`: the writers' scan parses only what a module-level function's first
 * write can depend on (`scanRanges`) and gives the answer of the whole module's parse, on every
 * Python file of the project and on the shapes that need more than the function's own text: a key
 * held in a module-level name, an alias of os.environ, a call before the write (then the whole
 * module is parsed), classes and functions that name no startup variable (not parsed).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, CASES, filesUnder } from "../../../support/helpers";
import { initEngine } from "../../../../../server/src/engine/lint";
import { pythonInput } from "../../../../../server/src/engine/python/parser";
import { scanRanges, writersOf } from "../../../../../server/src/engine/python/project";
import { DEFAULT_EAGER_INIT_MODULES, STARTUP_VARIABLES } from "../../../../../server/src/engine/frameworks";

const OPTIONS = { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false };
const answer = (text: string) => {
  const partial = writersOf(text, OPTIONS, "partial");
  return {
    partial: partial && Object.fromEntries(partial),
    whole: Object.fromEntries(writersOf(text, OPTIONS, "whole")!),
  };
};
/** The source text of the ranges scanRanges keeps, joined. */
const kept = (text: string) =>
  scanRanges(text)
    .map((r) => text.slice(r.start, r.end))
    .join("");

test("the partial scan gives the whole module's writers on every Python file of the project that names a startup variable", async () => {
  await initEngine();
  const files = [
    ...filesUnder(join(ROOT, "test", "fixtures"), (n) => n.endsWith(".py")),
    ...filesUnder(join(ROOT, "test", "recall"), (n) => n.endsWith(".py")),
    ...filesUnder(CASES, (n) => n.endsWith(".py")),
    ...filesUnder(join(ROOT, "examples"), (n) => n.endsWith(".py")),
  ];
  let namers = 0,
    writers = 0;
  for (const f of files) {
    const text = pythonInput(readFileSync(f, "utf8"));
    if (!STARTUP_VARIABLES.some((v) => text.includes(v))) continue;
    namers++;
    const { partial, whole } = answer(text);
    writers += Object.keys(whole).length;
    if (partial) assert.deepEqual(partial, whole, f);
  }
  assert.ok(namers > 50 && writers > 0, `${namers} modules name a startup variable, ${writers} writers`);
});

test("what the partial scan parses: module-level statements and the functions that can write, not classes or other functions", async () => {
  await initEngine();
  const text = [
    "import os",
    "import torch",
    'KEY = "CUDA_VISIBLE_DEVICES"',
    "env = os.environ",
    "",
    "class Trainer:",
    "    def pin(self):",
    '        os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    "",
    "def unrelated():",
    "    return torch.cuda.device_count()",
    "",
    "def pin_literal():",
    '    os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "",
    "def pin_by_name():",
    '    os.environ[KEY] = "2"',
    "",
    "def pin_alias():",
    '    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"',
    "",
  ].join("\n");
  const parsed = kept(text);
  assert.ok(!parsed.includes("class Trainer") && !parsed.includes("def unrelated"), parsed);
  for (const s of ["import torch", "KEY =", "env = os.environ", "def pin_literal", "def pin_by_name", "def pin_alias"])
    assert.ok(parsed.includes(s), `${s} not parsed`);
  const { partial, whole } = answer(text);
  // The model does not follow KEY into pin_by_name's write today; the partial scan parses it all the same.
  assert.deepEqual(whole, {
    pin_literal: { variable: "CUDA_VISIBLE_DEVICES", line: 14 },
    pin_alias: { variable: "CUDA_DEVICE_ORDER", line: 20 },
  });
  assert.deepEqual(partial, whole);
});

test("a writer that calls anything before its write needs the whole module: the partial scan answers null", async () => {
  await initEngine();
  // helper() initialises CUDA, so pin() writes after an init of its own: no writer, which only the
  // whole module (helper's definition) shows.
  const text = [
    "import os",
    "import torch",
    "",
    "def helper():",
    "    torch.cuda.init()",
    "",
    "def pin():",
    "    helper()",
    '    os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    "",
  ].join("\n");
  assert.ok(!kept(text).includes("def helper"), "helper names no startup variable: not parsed");
  const { partial, whole } = answer(text);
  assert.equal(partial, null);
  assert.deepEqual(whole, {});
  // A call inside the writing statement runs before the write too.
  const inside = text.replace(
    '    helper()\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    '    os.environ["CUDA_VISIBLE_DEVICES"] = helper()',
  );
  assert.ok(inside.includes("= helper()"));
  assert.equal(answer(inside).partial, null);
  // The write's own call (os.environ.setdefault) is no call before it.
  const own = text.replace(
    '    helper()\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    '    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")',
  );
  assert.deepEqual(answer(own).partial, { pin: { variable: "CUDA_VISIBLE_DEVICES", line: 8 } });
  assert.deepEqual(answer(own).whole, answer(own).partial);
  // Without the call first, the partial scan answers, and as the whole module does.
  const first = text.replace("    helper()\n", "    x = 1\n");
  assert.deepEqual(answer(first).partial, { pin: { variable: "CUDA_VISIBLE_DEVICES", line: 9 } });
  assert.deepEqual(answer(first).whole, answer(first).partial);
});
