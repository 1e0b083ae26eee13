import assert from "node:assert/strict";
import { test } from "node:test";
import { INIT_CATALOGUE } from "../../../server/src/engine/initCatalogue";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lintCode, ROOT } from "../support/helpers";
import { initEngine } from "../../../server/src/engine/lint";
import { lintNotebook } from "../../../server/src/engine/notebook";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU048");

test("GPU048: error on notebook_launcher(num_processes=2) after TrainingArguments(), naming the init and the forked-child error", async () => {
  const src =
    'from accelerate import notebook_launcher\nfrom transformers import TrainingArguments\nargs = TrainingArguments(output_dir="o")\ndef f():\n    pass\nnotebook_launcher(f, num_processes=2)\n';
  const [d, ...rest] = await lintCode(src, "GPU048");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.deepEqual([d.range.start.line, d.range.start.character, d.range.end.character], [5, 0, 37]);
  assert.match(
    d.message,
    /^notebook_launcher\(num_processes=2\) forks its workers, but CUDA was already initialised by transformers\.TrainingArguments\(\) \(line 3/,
  );
  assert.match(
    d.message,
    /"Cannot re-initialize CUDA in forked subprocess" \(accelerate\/launchers\.py notebook_launcher\)/,
  );
  assert.equal(d.related?.[0].range.start.line, 2);
});

test("GPU048: an Accelerator made before the call gets accelerate's own refusal", async () => {
  const [d] = await lintCode(
    "import accelerate\nacc = accelerate.Accelerator()\ndef f():\n    pass\naccelerate.notebook_launcher(f, num_processes=8)\n",
    "GPU048",
  );
  assert.match(
    d.message,
    /after accelerate\.Accelerator\(\) \(line 2.*\): accelerate refuses it \("the Accelerator should only be initialized inside your training function"/,
  );
});

test("GPU048 across notebook cells: the init in cell 2, the launcher in cell 4", async () => {
  await initEngine();
  const cells = [
    { kind: "code" as const, text: "import torch\nfrom accelerate import notebook_launcher" },
    { kind: "code" as const, text: "model = torch.nn.Linear(4, 4).to('cuda')" },
    { kind: "code" as const, text: "def train():\n    print(model)" },
    { kind: "code" as const, text: "notebook_launcher(train, num_processes=2)" },
  ];
  const [d] = lintNotebook(cells).diagnostics.filter((x) => x.code === "GPU048");
  assert.equal(d.cell, 3);
  assert.equal(d.range.start.line, 0);
});

test("GPU048 stays silent: one process, a count in a variable, no init before, init only inside the launched function, a lazy call before", async () => {
  for (const src of [
    'import torch\nfrom accelerate import notebook_launcher\nx = torch.ones(1, device="cuda")\nnotebook_launcher(print, num_processes=1)\n',
    'import torch\nfrom accelerate import notebook_launcher\nx = torch.ones(1, device="cuda")\nn = 2\nnotebook_launcher(print, num_processes=n)\n',
    'from accelerate import notebook_launcher\nnotebook_launcher(print, num_processes=2)\nimport torch\nx = torch.ones(1, device="cuda")\n',
    'import torch\nfrom accelerate import notebook_launcher\ndef f():\n    torch.ones(1, device="cuda")\nnotebook_launcher(f, num_processes=2)\n',
    "import torch\nfrom accelerate import notebook_launcher\ntorch.cuda.device_count()\ntorch.cuda.manual_seed_all(0)\nnotebook_launcher(print, num_processes=2)\n",
    'import torch\nfrom mylib import notebook_launcher\nx = torch.ones(1, device="cuda")\nnotebook_launcher(print, num_processes=2)\n',
  ])
    assert.deepEqual(await lintCode(src, "GPU048"), [], src);
});

test("GPU048: torch.cuda.is_available() and Seq2SeqTrainingArguments() before the launcher break the fork (measured)", async () => {
  const avail = await lintCode(
    "import torch\nfrom accelerate import notebook_launcher\nif torch.cuda.is_available():\n    print('gpu')\nnotebook_launcher(print, num_processes=2)\n",
    "GPU048",
  );
  assert.equal(avail.length, 1);
  assert.match(avail[0].message, /initialised by torch\.cuda\.is_available\(\) \(line 3\)/);
  const s2s = await lintCode(
    'from accelerate import notebook_launcher\nfrom transformers import Seq2SeqTrainingArguments\na = Seq2SeqTrainingArguments(output_dir="o")\nnotebook_launcher(print, num_processes=2)\n',
    "GPU048",
  );
  assert.match(
    s2s[0].message,
    /initialised by transformers\.Seq2SeqTrainingArguments\(\) \(line 3\): each worker fails/,
  );
});

test("GPU048's measured claims are rows of verify/results-fork-h200.json: the breaking calls broke the child, the lazy ones did not", () => {
  const res = JSON.parse(readFileSync(join(ROOT, "verify", "results-fork-h200.json"), "utf8")) as {
    env: Record<string, string>;
    cases: Array<{ case: string; fork: { child?: string }; notebook_launcher?: { launcher?: string } }>;
  };
  const row = (name: string) => res.cases.find((c) => c.case === name)!;
  const broke = (name: string) =>
    /^RuntimeError: Cannot re-initialize CUDA in forked subprocess/.test(row(name).fork.child ?? "");
  for (const name of [
    "cuda.is_available",
    "cuda.get_device_name",
    "cuda.set_device",
    "cuda.mem_get_info",
    "tensor on cuda",
    "transformers.TrainingArguments",
    "transformers.Seq2SeqTrainingArguments",
    "accelerate.Accelerator",
  ])
    assert.ok(broke(name), name);
  for (const name of ["nothing (import torch only)", "cuda.device_count"])
    assert.equal(row(name).fork.child, "ok", name);
  // The library calls the rule counts (catalogue entries that name callables) each broke the fork.
  for (const e of INIT_CATALOGUE)
    if (e.initialises !== "import" && e.initialises.length && ["transformers", "accelerate"].includes(e.library))
      assert.ok(broke(e.initialises[0]), `${e.initialises[0]}: measured to break a fork?`);
  assert.match(
    row("accelerate.Accelerator").notebook_launcher?.launcher ?? "",
    /the `Accelerator` should only be initialized inside your training function/,
  );
  assert.equal(res.env.torch, "2.11.0+cu130");
});

test("GPU048 takes the timeline's order: a measured call after the launcher does not count; the earlier of a call and an init is named", async () => {
  const after =
    'from accelerate import notebook_launcher\nfrom transformers import Seq2SeqTrainingArguments\nnotebook_launcher(print, num_processes=2)\na = Seq2SeqTrainingArguments(output_dir="o")\n';
  assert.deepEqual(await lintCode(after, "GPU048"), []);
  const both =
    'import torch\nfrom accelerate import notebook_launcher\nfrom transformers import Seq2SeqTrainingArguments\na = Seq2SeqTrainingArguments(output_dir="o")\nx = torch.ones(1, device="cuda")\nnotebook_launcher(print, num_processes=2)\n';
  const [d] = await lintCode(both, "GPU048");
  assert.match(d.message, /initialised by transformers\.Seq2SeqTrainingArguments\(\) \(line 4/);
  const initFirst = both.replace(
    'a = Seq2SeqTrainingArguments(output_dir="o")\nx = torch.ones(1, device="cuda")',
    'x = torch.ones(1, device="cuda")\na = Seq2SeqTrainingArguments(output_dir="o")',
  );
  assert.match(
    (await lintCode(initFirst, "GPU048"))[0].message,
    /initialised by torch\.ones\(device="cuda"\) \(line 4\)/,
  );
});
