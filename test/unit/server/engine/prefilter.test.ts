/**
 * The text prefilter is sound: on every Python file we have (rule fixtures, rule cases, examples,
 * verify programs, e2e workspace files), each rule that reports something with the prefilter off
 * is among the file's candidate rules, and linting with the prefilter gives exactly the same
 * diagnostics as without it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, CASES, filesUnder } from "../../support/helpers";
import { initEngine, lintPython } from "../../../../server/src/engine/lint";
import { candidateRules } from "../../../../server/src/engine/prefilter";
import { hasWord, SCANNED_WORDS, TextProbe } from "../../../../server/src/engine/textProbe";
import { hasSbatchLine } from "../../../../server/src/engine/manifests/prefilter";
import { RULES } from "../../../../server/src/engine/rules/index";
import { MISSPELLINGS } from "../../../../server/src/engine/rules/GPU007-misspelled-cuda-variable";
import { isPythonRule, type PythonTrigger } from "../../../../server/src/engine/rule";

const pyFiles = (dir: string): string[] => filesUnder(dir, (n) => n.endsWith(".py"));

const FILES = [
  ...pyFiles(join(ROOT, "test", "fixtures", "rules")),
  ...pyFiles(CASES),
  ...pyFiles(join(ROOT, "examples")),
  ...pyFiles(join(ROOT, "verify")),
  ...pyFiles(join(ROOT, "test", "e2e", "workspace")),
];
const PYTHON_RULES = RULES.filter(isPythonRule);
const PYTHON_CODES = PYTHON_RULES.map((r) => r.meta.code as string);
/** Each Python rule's trigger, by code (the rule's `meta.trigger`). */
const PYTHON_TRIGGERS: Readonly<Record<string, PythonTrigger>> = Object.fromEntries(
  PYTHON_RULES.map((r) => [r.meta.code, r.meta.trigger]),
);
const MACHINE = {
  gpuCount: 2,
  uuids: ["GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f", "GPU-6486822f-842c-1320-f829-e4155c0d2130"],
};

test("every Python rule has a trigger in its meta; GPU017 needs the machine, GPU036, GPU037 and GPU063 a job script, GPU044 a launch passing the local rank as an argument, GPU064 a script that starts the file with CUDA_VISIBLE_DEVICES set", () => {
  assert.equal(PYTHON_CODES.length, 53);
  for (const rule of PYTHON_RULES) assert.equal(typeof rule.meta.trigger, "function", rule.meta.code);
  assert.deepEqual(
    PYTHON_RULES.filter((r) => r.meta.needs).map((r) => `${r.meta.code}:${r.meta.needs}`),
    ["GPU017:machine", "GPU036:slurm", "GPU037:slurm", "GPU044:localRankArg", "GPU063:slurm", "GPU064:visibleLaunch"],
  );
});

test("candidateRules leaves out a rule whose need is not met, whatever its trigger says", () => {
  const text =
    "import os, torch\nr = int(os.environ['LOCAL_RANK'])\nx = torch.zeros(1).to(f'cuda:{r}')\nos.environ['CUDA_VISIBLE_DEVICES'] = '7'\n";
  const codes = ["GPU017", "GPU036", "GPU037", "GPU003"];
  assert.deepEqual([...candidateRules(text, codes, { machineKnown: false })], ["GPU003"]);
  assert.deepEqual([...candidateRules(text, codes, { machineKnown: true })], ["GPU017", "GPU003"]);
  assert.deepEqual(
    [...candidateRules(text, codes, { machineKnown: false, slurmLaunched: true })],
    ["GPU036", "GPU037", "GPU003"],
  );
  // GPU044: a job script alone is not enough; a launch passing the local rank as an argument is.
  const parser = 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--local_rank")\n';
  assert.deepEqual([...candidateRules(parser, ["GPU044"], { machineKnown: false, slurmLaunched: true })], []);
  assert.deepEqual([...candidateRules(parser, ["GPU044"], { machineKnown: false, localRankArg: true })], ["GPU044"]);
  // A code that names no Python rule (a manifest rule) is kept: the prefilter does not judge it.
  assert.deepEqual([...candidateRules("x = 1\n", ["GPU018", "GPU003"], { machineKnown: true })], ["GPU018"]);
});

test(`prefilter soundness on ${FILES.length} real files: what fires is always a candidate, output unchanged`, async () => {
  await initEngine();
  assert.ok(FILES.length > 80, `only ${FILES.length} files found`);
  let fired = 0;
  for (const f of FILES) {
    const text = readFileSync(f, "utf8");
    const full = lintPython(text, { noPrefilter: true, machine: MACHINE });
    full.tree?.delete();
    const cands = candidateRules(text, PYTHON_CODES, { machineKnown: true });
    for (const d of full.diagnostics)
      assert.ok(cands.has(d.code), `${f}: ${d.code} fired but the prefilter would skip it`);
    const fast = lintPython(text, { machine: MACHINE });
    fast.tree?.delete();
    assert.deepEqual(fast.diagnostics, full.diagnostics, f);
    fired += full.diagnostics.length;
    // Preview rules and checks have triggers of their own (GPU008, GPU011 are wider with preview on).
    const fullPreview = lintPython(text, { noPrefilter: true, machine: MACHINE, preview: true });
    fullPreview.tree?.delete();
    const candsPreview = candidateRules(text, PYTHON_CODES, { machineKnown: true, preview: true });
    for (const d of fullPreview.diagnostics)
      assert.ok(candsPreview.has(d.code), `${f}: ${d.code} fired with --preview but the prefilter would skip it`);
    const fastPreview = lintPython(text, { machine: MACHINE, preview: true });
    fastPreview.tree?.delete();
    assert.deepEqual(fastPreview.diagnostics, fullPreview.diagnostics, `${f} (preview)`);
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

test("a fresh probe's one-pass scan of its common words answers as indexOf and a whole-word search do", () => {
  const crafted = [
    "",
    "to",
    "torch",
    "xtorch torch",
    "jax_platforms = jax_platform",
    "model.delta; del x",
    "\u00e9nviron environ\u0165orch torch", // non-ASCII characters whose low 7 bits spell a word's start
    "caf\u00e9 = os.getenv('A')\n\u4e2d torch_", // a two-byte text
    "pop" + "x".repeat(50) + "pop",
  ];
  for (const text of [...crafted, ...FILES.map((f) => readFileSync(f, "utf8"))]) {
    const probe = new TextProbe(text);
    for (const w of SCANNED_WORDS) {
      assert.equal(probe.has(w), text.includes(w), `${w} in ${JSON.stringify(text.slice(0, 40))}`);
      assert.equal(probe.hasWord(w), hasWord(text, w), `whole ${w} in ${JSON.stringify(text.slice(0, 40))}`);
    }
  }
});

test("GPU009's trigger: reload, sys + modules, or a del before an import (a re-import needs one)", () => {
  const fires = (t: string) => PYTHON_TRIGGERS.GPU009(new TextProbe(t), false);
  assert.equal(fires("import torch\ndel torch\nimport torch\n"), true);
  assert.equal(
    fires("import torch\nx = 1\ndel x\n"),
    false,
    "a del after the last import cannot be followed by a re-import",
  );
  assert.equal(fires("import importlib, torch\nimportlib.reload(torch)\n"), true);
  assert.equal(fires("import sys\nsys.modules.pop('torch')\nimport torch\n"), true);
  assert.equal(fires("for m in model.modules():\n    pass\n"), false);
});

test("GPU009's trigger is sharp: the del, pop or reload must be about the framework (issue 20: 33 -> 0 files of python3-torch)", () => {
  const fires = (t: string) => PYTHON_TRIGGERS.GPU009(new TextProbe(t), false);
  // del of a name: only a name an import binds to the framework itself.
  assert.equal(fires("import torch\nx = torch.zeros(1)\ndel x\nimport torch.nn\n"), false, "del of a tensor");
  assert.equal(fires("import torch as th\nth.cuda.init()\ndel th\nimport torch\n"), true, "an alias of torch");
  assert.equal(fires("import torch \\\n    as th\ndel th\nimport torch\n"), true, "an alias after a line continuation");
  assert.equal(
    fires("import jax\nif True: del (\n    jax)\nimport jax\n"),
    true,
    "a target on the next line, inside brackets",
  );
  assert.equal(
    fires('import torch\ndef f():\n    """\n    del m\n    torch.jit.script(m)\n    """\nimport torch\n'),
    false,
    "a del in a docstring is no statement",
  );
  assert.equal(
    fires("import torch\ndel old_flags  # torch\n# torch is imported again\nimport torch\n"),
    false,
    "torch in a comment after the del",
  );
  assert.equal(fires("import torch\ndel _torch_docs, torch\nimport torch\n"), true, "the framework as a later target");
  // sys.modules: the key must be a string naming the framework, inside the statement.
  assert.equal(fires("import sys, torch\ndel sys.modules['torch.cuda']\nimport torch\n"), true);
  assert.equal(
    fires('import sys, torch\nmods = sys.modules\ndel mods["to" "rch"]\nimport torch\n'),
    true,
    "an alias and an implicitly concatenated key",
  );
  assert.equal(
    fires("import sys, torch\ndel sys.modules[name]\nx = 'torch'\nimport torch\n"),
    false,
    "the string is not in the del",
  );
  assert.equal(fires("import sys, torch\nsys.modules.pop('torchvision')\nimport torch\n"), false, "another package");
  assert.equal(fires("import sys, torch\nsys.modules.pop(\n    'torch', None)\nimport torch\n"), true);
  assert.equal(fires("import sys, torch\nimport torch\nsys.modules.pop('torch')\n"), false, "no import after the pop");
  // reload: of importlib or imp.
  assert.equal(fires("import torch\nmodel.reload(torch)\n"), false);
  assert.equal(fires("from importlib import reload\nimport torch\nreload(torch)\n"), true);
  // A text CPython's tokenizer rejects (here: an unexpected indent) is not judged by its words.
  assert.equal(fires("import torch as th\n  x = 1\ndel th\nimport torch\n"), true);
});

test("GPU011's default trigger needs init_process_group in the code, an NCCL backend and work on the current device (issue 20: 23 -> 8 files of python3-torch)", () => {
  const fires = (t: string, preview = false) => PYTHON_TRIGGERS.GPU011(new TextProbe(t), preview);
  assert.equal(fires("import torch.distributed as dist\ndist.init_process_group('gloo')\n"), false);
  assert.equal(fires("import torch.distributed as dist\ndist.init_process_group(backend='NCCL')\nm.cuda()\n"), true);
  assert.equal(
    fires("import torch.distributed as dist\ndist.init_process_group(dist.Backend.NCCL)\nx.to('cuda')\n"),
    true,
  );
  assert.equal(
    fires("import torch.distributed as dist\ndist.init_process_group('gloo')\n", true),
    true,
    "preview: constant devices in any distributed file",
  );
  assert.equal(
    fires('def f():\n    """Call init_process_group(\'nccl\') first, then .cuda()."""\n'),
    false,
    "only a docstring names it",
  );
  assert.equal(
    fires("import torch.distributed as dist\ndist.init_process_group('nccl')\nx = 1\n"),
    false,
    "no work on the current device",
  );
  assert.equal(
    fires("import torch.distributed as dist\ndist.init_process_group('nccl')\ndist.barrier()\n"),
    true,
    "a barrier",
  );
});

test("GPU010, GPU012 and GPU013 need their names in the code, not only in a docstring or comment (issue 20: 30 -> 17 files of python3-torch)", () => {
  const fires = (code: string, t: string) => PYTHON_TRIGGERS[code](new TextProbe(t), false);
  assert.equal(
    fires(
      "GPU010",
      'import torch\n\ndef f(m):\n    """Unlike DataParallel, this keeps one device."""\n    return m  # not nn.DataParallel\n',
    ),
    false,
    "docstring and comment",
  );
  assert.equal(fires("GPU010", "import torch.nn as nn\nm = nn.DataParallel(model)\n"), true);
  assert.equal(fires("GPU010", "from torch.nn import DataParallel as DP\n"), true);
  assert.equal(fires("GPU010", 'x = f"{nn.DataParallel(m)}"\n'), true, "code in an f-string's replacement field");
  assert.equal(fires("GPU010", "from torch.nn.parallel import DistributedDataParallel\n"), false, "a longer word only");
  assert.equal(
    fires("GPU010", "x = 1\n  y = nn.DataParallel\n# DataParallel\n"),
    true,
    "a text CPython's tokenizer rejects passes",
  );
  for (const code of ["GPU012", "GPU013"]) {
    assert.equal(
      fires(code, "# ported from tensorflow's summary writer\n'''see keras.callbacks'''\nimport numpy\n"),
      false,
      `${code}: comment and string`,
    );
    assert.equal(fires(code, "import tensorflow as tf\n"), true, code);
    assert.equal(fires(code, "from tensorflow.keras import layers\n"), true, code);
    assert.equal(fires(code, "import tf_keras\n"), true, `${code}: inside a longer code word`);
  }
  // One scan serves GPU008's, GPU009's, GPU011's and these words' questions.
  const p = new TextProbe(
    "import tensorflow\nimport torch\nfrom torch.nn import DataParallel\ndel torch\nimport torch\n",
  );
  assert.equal(p.codeWord("tensorflow", false), true);
  assert.equal(p.codeWord("DataParallel", true), true);
  assert.equal(p.codeWord("keras", false), false);
  assert.equal(p.delOfModule(["torch"]), true);
  assert.equal((p as unknown as { scans: unknown[] }).scans.length, 1);
});

test("GPU007's trigger judges the whole string or keyword around a near miss: a right name is no misspelling", () => {
  const fires = (t: string) => PYTHON_TRIGGERS.GPU007(new TextProbe(t), false);
  assert.equal(
    fires("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\nos.environ.get('CUDA_DEVICE_ORDER')\n"),
    false,
    "right names",
  );
  assert.equal(fires("import os\nos.environ['CUDA_VISIBLE_DEVICES_X'] = '0'\n"), true, "two characters too many");
  assert.equal(fires("import os\nos.environ.update(CUDA_VISBLE_DEVICES='0')\n"), true, "a keyword of update()");
  assert.equal(fires("import os\nos.environ['cuda_visible_devices'] = '0'\n"), true, "the wrong case");
  assert.equal(fires("import os\nos.environ['CUDA_AVAILABLE_DEVICES'] = '0'\n"), true, "a known wrong name");
  assert.equal(
    fires("import os\nx = os.environ\n# CUDA_VISIBLE_DEVICES is read by CUDA\n"),
    false,
    "a right name in a comment",
  );
  assert.equal(
    fires("import os\nos.environ.update(\n    CUDA_VISBLE_DEVICES  # a comment\n    = '0')\n"),
    true,
    "a keyword whose = opens a line",
  );
  assert.equal(
    fires("import os\nos.environ.get('A', 'CUDA_VISIBLE_DEVICE')\n"),
    true,
    "the second of two strings on a line",
  );
  assert.equal(
    fires("import os\nif os.environ.get('CUDA_VISIBLE_DEVICES') == 'CUDA_VISIBLE_DEVICES': pass\n"),
    false,
    "== is no keyword, the strings are right",
  );
});

test("hasSbatchLine: only a line that starts with #SBATCH makes a shell script a job script", async () => {
  assert.equal(hasSbatchLine("#SBATCH --gres=gpu:1\n"), true);
  assert.equal(hasSbatchLine("#!/bin/bash\r\n#SBATCH -N 1\r\n"), true);
  assert.equal(hasSbatchLine("#!/bin/bash\n  #SBATCH -N 1\necho '#SBATCH'\n"), false);
});

/** Every string one edit away from `v` over `alphabet` (substitutions, insertions, deletions at every position). */
function oneEdit(v: string, alphabet: string): string[] {
  const out: string[] = [];
  for (let i = 0; i <= v.length; i++) {
    for (const c of alphabet) {
      out.push(v.slice(0, i) + c + v.slice(i)); // insertion
      if (i < v.length) out.push(v.slice(0, i) + c + v.slice(i + 1)); // substitution
    }
    if (i < v.length) out.push(v.slice(0, i) + v.slice(i + 1)); // deletion
  }
  return out;
}

test("GPU007's trigger: every misspelling misspellingOf finds, 1 or 2 edits in any position, any case, fires it", async () => {
  const { misspellingOf, VENDOR_VARIABLES, KNOWN_WRONG_NAMES } =
    await import("../../../../server/src/engine/rules/GPU007-misspelled-cuda-variable");
  const { STARTUP_VARIABLES } = await import("../../../../server/src/engine/frameworks");
  const fires = (name: string) =>
    PYTHON_TRIGGERS.GPU007(new TextProbe(`import os\nos.environ["${name}"] = "0"\n`), false);
  const alphabet = "AZ_9-x. ";
  let checked = 0;
  let rng = 7;
  const random = (n: number) => {
    rng = (rng * 1103515245 + 12345) % 2147483648;
    return rng % n;
  };
  for (const v of [...STARTUP_VARIABLES, ...VENDOR_VARIABLES, ...KNOWN_WRONG_NAMES.keys()]) {
    const ones = oneEdit(v, alphabet);
    for (const one of ones) {
      // All 1-edit names, and 12 random 2-edit names from each, in upper, lower and mixed case.
      const twos = oneEdit(one, alphabet);
      const names = [one, ...Array.from({ length: 12 }, () => twos[random(twos.length)])];
      for (const n of names) {
        for (const name of [n, n.toLowerCase(), n.replace(/[A-Z]/g, (c, i: number) => (i % 2 ? c.toLowerCase() : c))]) {
          if (misspellingOf(name) === null) continue;
          checked++;
          assert.equal(fires(name), true, `${name} (a misspelling of ${misspellingOf(name)}) would be skipped`);
        }
      }
    }
  }
  assert.ok(checked > 20000, `only ${checked} misspellings checked`);
  assert.equal(fires("CUDA_LAUNCH_BLOCKING_MODE"), false, "a name far from every startup variable");
  assert.equal(
    PYTHON_TRIGGERS.GPU007(new TextProbe("x = 'CUDA_VISIBLE_DEVICE'\n"), false),
    false,
    "no environment access",
  );
});

test("the environment rules need their variable by name: a torch-style file that only reads other variables is skipped", () => {
  const text =
    "import os\nDEBUG = os.environ.get('TORCH_SHOW_CPP_STACKTRACES')\nimport sys\nx = sys.modules[__name__]\n";
  const cands = candidateRules(text, PYTHON_CODES, { machineKnown: false });
  assert.deepEqual([...cands], []);
  for (const [code, text] of [
    ["GPU003", "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0,0'\n"],
    ["GPU026", "import os\nos.putenv('PYTORCH_ALLOC_CONF', 'x')\n"],
    ["GPU027", "import os\nos.environ['JAX_PLATFORMS'] = 'gpu'\n"],
    ["GPU028", "import os\nos.environ['XLA_PYTHON_CLIENT_MEM_FRACTION'] = '.5'\n"],
    ["GPU030", "import os\nos.environ.update(KERAS_BACKEND='jax')\n"],
    ["GPU031", "from os import environ\nenviron['HIP_VISIBLE_DEVICES'] = '1'\n"],
    ["GPU032", "import os\nos.environ['ZE_AFFINITY_MASK'] = '0.1'\n"],
    ["GPU016", "import os\nos.environ['CUDA_MEMORY_LIMIT'] = '1'\n"],
  ] as const)
    assert.ok(candidateRules(text, PYTHON_CODES, { machineKnown: false }).has(code), code);
});

test("GPU008 and GPU011 default triggers: a thread for set_device, init_process_group; preview widens them", () => {
  const t = (s: string) => new TextProbe(s);
  assert.equal(PYTHON_TRIGGERS.GPU008(t("import torch\ntorch.cuda.set_device(0)\n"), false), false);
  assert.equal(PYTHON_TRIGGERS.GPU008(t("import torch\ntorch.cuda.set_device(0)\n"), true), true);
  assert.equal(
    PYTHON_TRIGGERS.GPU008(
      t("import threading, torch\nthreading.Thread(target=lambda: torch.cuda.set_device(1)).start()\n"),
      false,
    ),
    true,
  );
  assert.equal(PYTHON_TRIGGERS.GPU011(t("import os\nr = int(os.environ['LOCAL_RANK'])\n"), false), false);
  assert.equal(PYTHON_TRIGGERS.GPU011(t("import os\nr = int(os.environ['LOCAL_RANK'])\n"), true), true);
});

test("an implicitly concatenated key is not an environment variable name (keyName)", async () => {
  await initEngine();
  const r = lintPython("import os\nimport torch\ntorch.cuda.init()\nos.environ['CUDA_' 'VISIBLE_DEVICES'] = '1'\n", {
    noPrefilter: true,
  });
  r.tree?.delete();
  assert.deepEqual(
    r.diagnostics.map((d) => d.code),
    [],
  );
  const plain = lintPython("import os\nimport torch\ntorch.cuda.init()\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n", {
    noPrefilter: true,
  });
  plain.tree?.delete();
  assert.deepEqual(
    plain.diagnostics.map((d) => d.code),
    ["GPU001"],
  );
});

test("a text nested too deep for the parser gets GPU000 with or without the prefilter (output unchanged)", async () => {
  await initEngine();
  const deep = "[".repeat(300) + "]".repeat(300) + "\n";
  for (const text of [
    `import numpy\nx = ${deep}`,
    `import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nx = ${deep}`,
  ]) {
    for (const noPrefilter of [false, true]) {
      const r = lintPython(text, { noPrefilter });
      assert.deepEqual(
        r.diagnostics.map((d) => d.code),
        ["GPU000"],
      );
      assert.match(r.diagnostics[0].message, /brackets nest more than 256 deep/);
    }
  }
});

test("GPU008's default trigger needs a constant device after a set_device in a file with threads", () => {
  const fires = (t: string, preview = false) => PYTHON_TRIGGERS.GPU008(new TextProbe(t), preview);
  assert.equal(
    fires(
      "import threading, torch\ndef work(rank):\n    torch.cuda.set_device(rank)\nthreading.Thread(target=work, args=(1,)).start()\n",
    ),
    false,
    "a variable device",
  );
  assert.equal(
    fires(
      "import threading, torch\ndef work():\n    torch.cuda.set_device(\n        1)\nthreading.Thread(target=work).start()\n",
    ),
    true,
    "a constant on the next line, inside brackets",
  );
  assert.equal(
    fires("import threading, torch\ndef work():\n    torch.cuda.set_device(torch.device('cuda', 1))\n"),
    true,
  );
  assert.equal(
    fires('import threading, torch\ndef work():\n    print(f"{torch.cuda.set_device(1)}")\n'),
    true,
    "a call in an f-string is code",
  );
  assert.equal(fires("import torch\ntorch.cuda.set_device(rank)\n", true), true, "preview: any set_device");
});

test("TextProbe.after answers has, hasWord and writesName as a fresh probe does, over 3,000 chained random edits of real files", async () => {
  const { textChange } = await import("../../../../server/src/engine/python/keptText");
  const { STARTUP_VARIABLES } = await import("../../../../server/src/engine/frameworks");
  const words = [
    "environ",
    "getenv",
    "putenv",
    "del",
    "import",
    "torch",
    "cuda",
    "device",
    "set_device",
    "init_process_group",
    "LOCAL_RANK",
    "x",
    "_",
    ...STARTUP_VARIABLES,
  ];
  const inserts = [
    "environ",
    "os.getenv",
    "del ",
    " import",
    "x",
    "_",
    "torch",
    "\n",
    " ",
    "CUDA_VISIBLE_DEVICES",
    "VISIBLE",
    "(",
    "e",
    '"',
    "'",
    "=",
    "==",
    "CUDA_VISIBLE_DEVICE",
    "S",
    "\r",
  ];
  let rng = 11;
  const random = (n: number) => {
    rng = (rng * 1103515245 + 12345) % 2147483648;
    return rng % n;
  };
  let checked = 0,
    derived = 0,
    misspelled = 0;
  for (const f of FILES.filter((_, i) => i % 9 === 0).slice(0, 10)) {
    // A last line whose name one deleted character spoils; a third of the edits land near it.
    let text = readFileSync(f, "utf8") + '\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
    let probe = new TextProbe(text);
    for (const w of words) {
      probe.has(w);
      probe.hasWord(w);
    }
    probe.writesName(MISSPELLINGS);
    for (let k = 0; k < 300; k++) {
      const at = random(3) === 0 ? Math.max(0, text.length - 1 - random(40)) : random(text.length + 1);
      const del = random(3) === 0 ? random(12) : 0;
      const next =
        text.slice(0, at) +
        (random(4) === 0 ? "" : inserts[random(inserts.length)]) +
        text.slice(Math.min(text.length, at + del));
      const p = TextProbe.after(probe, next, textChange(text, next));
      const fresh = new TextProbe(next);
      for (const w of words) {
        assert.equal(p.has(w), fresh.has(w), `${f} edit ${k}: has(${w})`);
        assert.equal(p.hasWord(w), fresh.hasWord(w), `${f} edit ${k}: hasWord(${w})`);
        checked += 2;
      }
      assert.equal(p.writesName(MISSPELLINGS), fresh.writesName(MISSPELLINGS), `${f} edit ${k}: writesName`);
      misspelled += +fresh.writesName(MISSPELLINGS);
      p.detach();
      probe = p;
      text = next;
      derived++;
    }
  }
  assert.ok(derived >= 3000 && checked > 100000, `${derived} edits, ${checked} answers`);
  assert.ok(
    misspelled > 0 && misspelled < derived,
    `${misspelled} of ${derived} versions hold a misspelled name: both answers were checked`,
  );
});

test("writesName after an edit: a name spoiled inside its quotes or before its `=` is found again, an edit elsewhere keeps the answer", async () => {
  const { textChange } = await import("../../../../server/src/engine/python/keptText");
  const after = (text: string, next: string) => {
    const p = new TextProbe(text);
    p.writesName(MISSPELLINGS);
    const q = TextProbe.after(p, next, textChange(text, next));
    return [q.writesName(MISSPELLINGS), new TextProbe(next).writesName(MISSPELLINGS)];
  };
  const quoted = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nx = 1\n';
  assert.deepEqual(after(quoted, quoted.replace("DEVICES", "DEVICE")), [true, true], "the quoted name lost its S");
  assert.deepEqual(after(quoted, quoted.replace("x = 1", "xy = 1")), [false, false]);
  const keyword = "import os\nos.environ.update(CUDA_VISIBLE_DEVICES=1)\n";
  assert.deepEqual(after(keyword, keyword.replace("DEVICES=", "DEVICE=")), [true, true], "the keyword lost its S");
  assert.deepEqual(after(keyword, keyword.replace("update(", "update(\n")), [false, false]);
  const opening = "import os\nos.environ.update(\n  CUDA_VISIBLE_DEVICES\n  =1)\n";
  assert.deepEqual(
    after(opening, opening.replace("DEVICES\n", "DEVICES\n\n")),
    [true, true],
    "a `=` that opens its line passes",
  );
});

/**
 * Notebooks: the project's notebooks, and every Python file above as a notebook three ways (one
 * cell per blank-line-separated part; then with each `os.environ["K"] = "v"` line written as
 * `%env K=v`, and as `!export K=v`), so that IPython lines carry the writes. With the prefilter,
 * the findings equal those with every rule run (before, a notebook ran every rule).
 */
test("prefilter soundness on notebooks: IPython lines' writes count, output unchanged", async () => {
  const { cellsOfIpynb, lintNotebook } = await import("../../../../server/src/engine/notebook");
  await initEngine();
  const asCells = (text: string) => text.split(/\n\s*\n/).map((t) => ({ kind: "code" as const, text: t }));
  const magic = (text: string, form: (k: string, v: string) => string) =>
    text
      .split("\n")
      .map((l) => {
        const m = /^(\s*)os\.environ\[["']([A-Za-z_][A-Za-z0-9_]*)["']\]\s*=\s*["']([^"'\s]*)["']\s*$/.exec(l);
        return m ? m[1] + form(m[2], m[3]) : l;
      })
      .join("\n");
  const notebooks = [
    ...[join(ROOT, "test"), join(ROOT, "examples")]
      .flatMap((d) => filesUnder(d, (n) => n.endsWith(".ipynb")))
      .map((f) => cellsOfIpynb(readFileSync(f, "utf8"))),
    ...FILES.flatMap((f) => {
      const t = readFileSync(f, "utf8");
      return [t, magic(t, (k, v) => `%env ${k}=${v}`), magic(t, (k, v) => `!export ${k}=${v}`)].map(asCells);
    }),
  ];
  let fired = 0,
    magicFired = 0;
  for (const cells of notebooks) {
    for (const preview of [false, true]) {
      const full = lintNotebook(cells, { noPrefilter: true, machine: MACHINE, preview, lazyFixValidation: true });
      const fast = lintNotebook(cells, { machine: MACHINE, preview, lazyFixValidation: true });
      assert.deepEqual(
        fast.diagnostics,
        full.diagnostics,
        cells
          .map((c) => c.text)
          .join("\n# ---\n")
          .slice(0, 400),
      );
      fired += full.diagnostics.length;
      magicFired += full.diagnostics.filter((d) =>
        /^\s*[%!]/.test(cells[d.cell].text.split("\n")[d.range.start.line] ?? ""),
      ).length;
    }
  }
  assert.ok(fired > 300 && magicFired > 40, `${fired} findings, ${magicFired} on IPython lines`);
});
