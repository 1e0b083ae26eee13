/**
 * The text prefilter is sound: on every Python file we have (rule fixtures, rule cases, examples,
 * verify programs, e2e workspace files), each rule that reports something with the prefilter off
 * is among the file's candidate rules, and linting with the prefilter gives exactly the same
 * diagnostics as without it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readdirSync, readFileSync, statSync, existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT, CASES } from "./helpers";
import { initEngine, lintPython } from "../../server/src/engine/lint";
import { candidateRules, hasWord, PYTHON_TRIGGERS, TextProbe } from "../../server/src/engine/prefilter";
import { RULES } from "../../server/src/engine/rules/index";
import { isManifestRule } from "../../server/src/engine/rule";

function pyFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) out.push(...pyFiles(p));
    else if (n.endsWith(".py")) out.push(p);
  }
  return out;
}

const FILES = [
  ...pyFiles(join(ROOT, "test", "fixtures", "rules")), ...pyFiles(CASES), ...pyFiles(join(ROOT, "examples")),
  ...pyFiles(join(ROOT, "verify")), ...pyFiles(join(ROOT, "test", "e2e", "workspace")),
];
const PYTHON_CODES = RULES.filter((r) => !isManifestRule(r)).map((r) => r.meta.code as string);
const MACHINE = { gpuCount: 2, uuids: ["GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f", "GPU-6486822f-842c-1320-f829-e4155c0d2130"] };

test("every Python rule has a trigger", () => {
  for (const code of PYTHON_CODES) assert.equal(typeof PYTHON_TRIGGERS[code], "function", code);
});

test(`prefilter soundness on ${FILES.length} real files: what fires is always a candidate, output unchanged`, async () => {
  await initEngine();
  assert.ok(FILES.length > 80, `only ${FILES.length} files found`);
  let fired = 0;
  for (const f of FILES) {
    const text = readFileSync(f, "utf8");
    const full = lintPython(text, { noPrefilter: true, machine: MACHINE });
    full.tree?.delete();
    const cands = candidateRules(text, PYTHON_CODES, { notebook: false, machineKnown: true });
    for (const d of full.diagnostics) assert.ok(cands.has(d.code), `${f}: ${d.code} fired but the prefilter would skip it`);
    const fast = lintPython(text, { machine: MACHINE });
    fast.tree?.delete();
    assert.deepEqual(fast.diagnostics, full.diagnostics, f);
    fired += full.diagnostics.length;
  }
  assert.ok(fired > 100, `only ${fired} diagnostics on the corpus`);
});

test("a file with no trigger is not parsed", async () => {
  await initEngine();
  const r = lintPython("import numpy as np\nx = np.zeros(3)\nprint(x)\n");
  assert.equal(r.parsed, false);
  assert.equal(r.tree, null);
  assert.deepEqual(r.diagnostics, []);
});

test("hasWord matches whole identifiers only", () => {
  assert.equal(hasWord("model.delta = 1", "del"), false);
  assert.equal(hasWord("x = 1\ndel x", "del"), true);
  assert.equal(hasWord("importlib.reload(torch)", "reload"), true);
  assert.equal(hasWord("autoreload", "reload"), false);
});

test("GPU009's trigger: reload, sys + modules, or a del before an import (a re-import needs one)", () => {
  const fires = (t: string) => PYTHON_TRIGGERS.GPU009(new TextProbe(t));
  assert.equal(fires("import torch\ndel torch\nimport torch\n"), true);
  assert.equal(fires("import torch\nx = 1\ndel x\n"), false, "a del after the last import cannot be followed by a re-import");
  assert.equal(fires("import importlib, torch\nimportlib.reload(torch)\n"), true);
  assert.equal(fires("import sys\nsys.modules.pop('torch')\n"), true);
  assert.equal(fires("for m in model.modules():\n    pass\n"), false);
});

test("hasSbatchLine: only a line that starts with #SBATCH makes a shell script a job script", async () => {
  const { hasSbatchLine } = await import("../../server/src/engine/prefilter");
  assert.equal(hasSbatchLine("#SBATCH --gres=gpu:1\n"), true);
  assert.equal(hasSbatchLine("#!/bin/bash\r\n#SBATCH -N 1\r\n"), true);
  assert.equal(hasSbatchLine("#!/bin/bash\n  #SBATCH -N 1\necho '#SBATCH'\n"), false);
});
