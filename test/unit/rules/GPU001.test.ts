import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lint as lintAll, lintCode, applyFix } from "../support/helpers";
import { initEngine, lintPython, type LintOptions } from "../../../server/src/engine/lint";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU001");

/** These tests are about the timing rules; later rules (GPU006's device-order hint, GPU008, GPU010) have their own tests. */
// Preview on: GPU002, the contrast these tests draw (a write that still works), is a preview check.
const lint = (text: string, options: LintOptions = {}) =>
  lintAll(text, { select: ["GPU001", "GPU002", "GPU003", "GPU004"], preview: true, ...options });

const C01 =
  'import os\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nmodel = torch.nn.Linear(8, 8).cuda()\n';

test("GPU001 sits on the write, is an error, and points at the initialising call", async () => {
  const [d] = await lintCode(C01, "GPU001");
  assert.deepEqual(d.range, { start: { line: 5, character: 0 }, end: { line: 5, character: 40 } });
  assert.equal(d.severity, "error");
  assert.match(d.message, /torch\.cuda\.is_available\(\) \(line 4\)/);
  assert.deepEqual(d.related?.[0].range, { start: { line: 3, character: 3 }, end: { line: 3, character: 28 } });
});

test("GPU001 fix moves the write above import torch; the result parses and is clean", async () => {
  const [d] = await lintCode(C01, "GPU001");
  assert.equal(d.fix?.title, "Move the CUDA_VISIBLE_DEVICES write above `import torch`");
  assert.equal(d.fix?.safe, true);
  const fixed = applyFix(C01, d);
  assert.equal(
    fixed,
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nimport torch\n\nif torch.cuda.is_available():\n    print("cuda ok")\nmodel = torch.nn.Linear(8, 8).cuda()\n',
  );
  assert.deepEqual(
    (await lint(fixed)).map((x) => x.code),
    [],
  );
});

test("GPU001 fix on examples/finetune_wrong_gpu.py: no doubled blank line left behind; the trailing comment moves with its statement", async () => {
  const src = readFileSync(join(__dirname, "..", "..", "..", "examples", "finetune_wrong_gpu.py"), "utf8");
  const [d] = await lintCode(src, "GPU001");
  const fixed = applyFix(src, d);
  const lines = src.split("\n");
  const write = 'os.environ["CUDA_VISIBLE_DEVICES"] = "1"  # meant to put the job on the second GPU';
  assert.equal(lines[14], write);
  assert.deepEqual(lines.slice(12, 17), [
    '    raise SystemExit("this script needs a GPU")',
    "",
    write,
    "",
    'device = torch.device("cuda")',
  ]);
  // Line 15 and the blank line 16 go; the write (with its comment) lands above `import torch`.
  assert.equal(fixed, [...lines.slice(0, 8), write, ...lines.slice(8, 14), ...lines.slice(16)].join("\n"));
  assert.ok(!/\n\n\n/.test(fixed), "no two blank lines in a row");
  assert.deepEqual(
    (await lint(fixed)).map((x) => x.code),
    [],
  );
});

test("GPU001 fix removes a blank line only where two would meet: blank above only, blank below only, a comment line above (which moves with the write)", async () => {
  const head = "import os\nimport torch\ntorch.cuda.init()\n";
  const w = "os.environ['CUDA_VISIBLE_DEVICES'] = '0'\n";
  const moved = (rest: string) => `import os\n${w}import torch\ntorch.cuda.init()\n${rest}`;
  const cases: Array<[string, string]> = [
    [`${head}\n${w}x = 1\n`, moved("\nx = 1\n")],
    [`${head}${w}\nx = 1\n`, moved("\nx = 1\n")],
    // The comment line directly above the write is about it: it moves with it (left behind, it would
    // describe `x = 1`), and the blank lines around the pair do not double.
    [
      `${head}\n# pick the GPU\n${w}\nx = 1\n`,
      `import os\n# pick the GPU\n${w}import torch\ntorch.cuda.init()\n\nx = 1\n`,
    ],
    [`${head}\n${w}\n\nx = 1\n`, moved("\n\nx = 1\n")],
    [`${head}\n${w}`, moved("\n")],
  ];
  for (const [src, want] of cases) {
    const [d] = await lintCode(src, "GPU001");
    assert.equal(applyFix(src, d), want, JSON.stringify(src));
  }
});

test("GPU001 fix adds `import os` when os is imported after the framework", async () => {
  const src = "import torch\nimport os\n\ntorch.cuda.init()\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n";
  const [d] = await lintCode(src, "GPU001");
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\nimport torch\nimport os\n\ntorch.cuda.init()\n",
  );
  assert.equal((await lint(fixed)).length, 0);
});

test("GPU001 fix keeps CRLF line endings and applying it twice changes nothing more", async () => {
  const src = "import os\r\nimport torch\r\ntorch.cuda.synchronize()\r\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\r\n";
  const [d] = await lintCode(src, "GPU001");
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    "import os\r\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\r\nimport torch\r\ntorch.cuda.synchronize()\r\n",
  );
  assert.equal((await lint(fixed)).length, 0);
});

test("GPU001 offers no fix when the value reads a name bound after the import", async () => {
  const src =
    "import os\nimport torch\nimport argparse\nargs = argparse.ArgumentParser().parse_args()\ntorch.cuda.init()\nos.environ['CUDA_VISIBLE_DEVICES'] = args.gpus\n";
  const [d] = await lintCode(src, "GPU001");
  assert.ok(d);
  assert.equal(d.fix, undefined);
});

test("GPU001 fix in an if block leaves `pass` when the write was alone there", async () => {
  const src =
    "import os\nimport torch\nprint(torch.cuda.current_device())\nif True:\n    os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n";
  const [d] = await lintCode(src, "GPU001");
  const fixed = applyFix(src, d);
  assert.equal(
    fixed,
    "import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\nimport torch\nprint(torch.cuda.current_device())\nif True:\n    pass\n",
  );
  assert.equal(d.fix?.safe, false, "moving out of a block changes when it runs: offered, not applied on save");
});

test("GPU001 follows ground truth: each listed initialising call freezes CUDA_VISIBLE_DEVICES", async () => {
  const calls = [
    "torch.cuda.is_available()",
    "torch.cuda.get_device_name(0)",
    "torch.cuda.set_device(0)",
    "torch.cuda.mem_get_info()",
    "torch.zeros(1).cuda()",
    "torch.ones(1, device='cuda')",
    "torch.cuda.is_bf16_supported()",
    "torch.cuda.get_arch_list()",
    "torch.cuda.Stream()",
    "torch.autocast('cuda')",
    "torch.amp.GradScaler('cuda')",
    "torch.nn.Linear(1, 1).to('cuda:0')",
    "torch.nn.DataParallel(torch.nn.Linear(1, 1))",
  ];
  for (const call of calls) {
    const src = `import os\nimport torch\n${call}\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n`;
    assert.deepEqual(
      (await lint(src)).map((d) => d.code),
      ["GPU001"],
      call,
    );
  }
});

test("GPU001 stays silent (GPU002 instead) for the calls ground truth measured lazy", async () => {
  const calls = [
    "torch.manual_seed(0)",
    "torch.cuda.manual_seed_all(0)",
    "torch.cuda.device_count()",
    "torch.backends.cudnn.benchmark = True",
    "torch.set_default_device('cuda')",
    "d = torch.device('cuda:0')",
    "torch.cuda.memory_allocated()",
    "torch.cuda.empty_cache()",
    "torch.cuda.is_initialized()",
  ];
  for (const call of calls) {
    const src = `import os\nimport torch\n${call}\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n`;
    assert.deepEqual(
      (await lint(src)).map((d) => d.code),
      ["GPU002"],
      call,
    );
  }
});

test("GPU001: device_count() initialises under torch < 2.4", async () => {
  const src = 'import os\nimport torch\nn = torch.cuda.device_count()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.deepEqual(
    (await lint(src, { torchBelow24: true })).map((d) => d.code),
    ["GPU001"],
  );
});

test("GPU001: configurable eager-init modules", async () => {
  const src = 'import os\nimport my_cuda_lib\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.deepEqual(
    (await lint(src)).map((d) => d.code),
    [],
  );
  assert.deepEqual(
    (await lint(src, { eagerInitModules: ["my_cuda_lib"] })).map((d) => d.code),
    ["GPU001"],
  );
});

// Issue 21: the freeze points measured on torch 2.11 (verify/results-frameworks-h200.json).
const codesAfter = async (pre: string, variable = "CUDA_VISIBLE_DEVICES") =>
  (await lint(`import os\nimport torch\n${pre}\nos.environ["${variable}"] = "1"\n`)).map(
    (d) => `${d.code}:${d.severity}`,
  );

test("GPU001: torch.accelerator.is_available/current_device_index/set_device_index, torch.__config__.show() and torch.backends.cudnn.version() freeze CUDA_VISIBLE_DEVICES", async () => {
  for (const call of [
    "torch.accelerator.is_available()",
    "torch.accelerator.current_device_index()",
    "torch.accelerator.set_device_index(0)",
    "torch.__config__.show()",
    "torch.backends.cudnn.version()",
    "torch.cuda.current_stream()",
  ]) {
    assert.deepEqual(await codesAfter(call), ["GPU001:error"], call);
  }
});

test("GPU001: torch.accelerator.device_count/current_accelerator, torch.cuda.Event() and torch.backends.cudnn.is_available() leave it writable (GPU002 only)", async () => {
  for (const call of [
    "torch.accelerator.device_count()",
    "torch.accelerator.current_accelerator()",
    "torch.cuda.Event()",
    "torch.backends.cudnn.is_available()",
  ]) {
    assert.deepEqual(await codesAfter(call), ["GPU002:information"], call);
  }
});

test("GPU001: PYTORCH_ALLOC_CONF (the newer name) freezes like PYTORCH_CUDA_ALLOC_CONF: not after is_available(), yes after get_device_name()", async () => {
  for (const v of ["PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"]) {
    assert.deepEqual(await codesAfter("torch.cuda.is_available()", v), ["GPU002:information"], v);
    assert.deepEqual(await codesAfter("torch.cuda.get_device_name(0)", v), ["GPU001:error"], v);
    assert.deepEqual(await codesAfter("torch.accelerator.current_device_index()", v), ["GPU001:error"], v);
  }
});

test("GPU001: import torch_geometric freezes CUDA_VISIBLE_DEVICES but not the allocator variables", async () => {
  const after = async (v: string) =>
    (await lint(`import os\nimport torch_geometric\nos.environ["${v}"] = "1"\n`)).map((d) => d.code);
  assert.deepEqual(await after("CUDA_VISIBLE_DEVICES"), ["GPU001"]);
  assert.ok(!(await after("PYTORCH_ALLOC_CONF")).includes("GPU001"));
});

test("GPU001: with KINETO_USE_DAEMON=1 set before it, import torch itself freezes CUDA_VISIBLE_DEVICES (measured, pytorch#171804)", async () => {
  const src =
    'import os\nos.environ["KINETO_USE_DAEMON"] = "1"\nimport torch\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const ds = await lint(src);
  assert.deepEqual(
    ds.map((d) => d.code),
    ["GPU001"],
  );
  assert.match(ds[0].message, /import torch with KINETO_USE_DAEMON=1/);
  assert.deepEqual(
    (await lint(src.replace('"1"\nimport', '"0"\nimport'))).map((d) => d.code),
    ["GPU002"],
  );
});

test("GPU001: a write for a child process started later in its block is no GPU001, however the start is named", async () => {
  const head = "import os\nimport torch\nx = torch.ones(1).cuda()\n";
  const write = 'os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const late = async (src: string) =>
    (await lint(src)).filter((d) => d.code === "GPU001").map((d) => d.range.start.line);
  // The start's name: the path's last name, an import alias, a module-level alias, torch.multiprocessing.
  for (const [imports, start] of [
    ["import subprocess\n", "subprocess.Popen(['python', 'w.py'])"],
    ["from subprocess import Popen as P\n", "P(['python', 'w.py'])"],
    ["import subprocess\nlaunch = subprocess.check_call\n", "launch(['python', 'w.py'])"],
    ["import torch.multiprocessing as mp\n", "mp.spawn(print, nprocs=2)"],
    ["import os as o\n", "o.execvpe('python', ['python'], o.environ)"],
    ["import subprocess\n", "def later():\n    subprocess.run(['python'])"],
  ]) {
    assert.deepEqual(await late(imports + head + write + start + "\n"), [], start);
    // The start before the write does not count: the write is late.
    assert.deepEqual(
      await late(imports + head + start + "\n" + write),
      [imports.split("\n").length - 1 + 3 + start.split("\n").length],
      `${start} before`,
    );
  }
  // A start after the write's block (an if) does not exempt it; one inside the block after it does.
  const inIf = 'if True:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.deepEqual(await late("import subprocess\n" + head + inIf + "subprocess.run(['python'])\n"), [5]);
  assert.deepEqual(await late("import subprocess\n" + head + inIf + "    subprocess.run(['python'])\n"), []);
  // A name that merely looks like one (no import) is no start.
  assert.deepEqual(await late(head + write + "Popen(['python'])\n"), [3]);
});

test("GPU001: after JAX's backend started, a write followed by a child process is still reported: this process keeps its preallocation while the children run", async () => {
  const src = (init: string) =>
    `import os\nimport subprocess\nimport jax\nimport jax.numpy as jnp\n\n${init}\nos.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"\n\n\ndef generate():\n    subprocess.run(["python", "w.py"], check=True)\n`;
  const [d, ...rest] = (await lint(src("table = jnp.linspace(0.0, 1.0, 64)"))).filter((x) => x.code === "GPU001");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 6);
  assert.equal(
    d.message,
    "XLA_PYTHON_CLIENT_PREALLOCATE is set after CUDA was initialised by jax.numpy.linspace() (line 6): it has no effect in this process; the child processes started after it get the new value, but this process keeps the memory JAX preallocated on the GPUs it sees (75% of the GPU's memory by default), which they cannot use",
  );
  // Without the child process: the plain message.
  const plain = (
    await lint(src("table = jnp.linspace(0.0, 1.0, 64)").replace(/\n\n\ndef generate[\s\S]*$/, "\n"))
  ).filter((x) => x.code === "GPU001");
  assert.equal(plain[0].message.split("; the child")[1], undefined);
  // torch initialised before the write for a child: the child's variable, no finding (as before).
  const torchSrc =
    'import os\nimport subprocess\nimport torch\n\nn = torch.cuda.device_count()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nsubprocess.run(["python", "w.py"])\n';
  assert.deepEqual(
    (await lint(torchSrc)).filter((x) => x.code === "GPU001"),
    [],
  );
});

test("GPU001: the editor's chunked module finds a child process started many statements later (another chunk)", async () => {
  await initEngine();
  const filler = Array.from({ length: 60 }, (_, i) => `v${i} = ${i}`).join("\n");
  const src = `import os\nimport subprocess\nimport torch\nx = torch.ones(1).cuda()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n${filler}\nsubprocess.run(["python", "w.py"])\n`;
  const r = lintPython(src, { select: ["GPU001"] }, { incremental: true });
  assert.ok(r.tree!.chunkCount > 1);
  assert.deepEqual(
    r.diagnostics.map((d) => d.code),
    [],
  );
  r.tree!.delete();
  const r2 = lintPython(
    src.replace('subprocess.run(["python", "w.py"])\n', ""),
    { select: ["GPU001"] },
    { incremental: true },
  );
  assert.deepEqual(
    r2.diagnostics.map((d) => d.range.start.line),
    [4],
  );
  r2.tree!.delete();
});

test("GPU001: many writes are placed on the timeline as one is (the first eight by search, the rest by a map of the events)", async () => {
  // 12 writes each side of the initialising call: stateBefore (timeline.ts) finds a write's place by
  // searching the events for its first eight lookups and from a map after; every write after the
  // call is late, none before it is.
  const writes = (from: number) =>
    Array.from({ length: 12 }, (_, i) => `os.environ["CUDA_VISIBLE_DEVICES"] = "${from + i}"\n`).join("");
  const text = `import os\n${writes(0)}import torch\ntorch.cuda.is_available()\n${writes(100)}`;
  const found = (await lintCode(text, "GPU001")).map((d) => d.range.start.line);
  assert.deepEqual(
    found,
    Array.from({ length: 12 }, (_, i) => 15 + i),
  );
});

// Methods: the object's life (the constructor, then the method), `self.method()` calls, and a
// module-level instance's calls.
const TRAINER = [
  "import os",
  "import torch",
  "",
  "class Trainer:",
  "    def __init__(self, gpus):",
  "        self.gpus = gpus",
  "        self.cuda = torch.cuda.is_available()",
  "",
  "    def setup(self):",
  '        os.environ["CUDA_VISIBLE_DEVICES"] = self.gpus',
  "",
].join("\n");

test("GPU001 in a method after the constructor initialised CUDA: error, named Class.method, related at the constructor's call", async () => {
  const [d, ...rest] = await lintCode(TRAINER, "GPU001");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.deepEqual([d.range.start.line, d.related?.[0].range.start.line], [9, 6]);
  assert.match(d.message, /torch\.cuda\.is_available\(\) \(line 7\) whenever `Trainer\.setup\(\)` runs/);
  assert.equal(d.fix, undefined, "no move fix out of a method");
});

test("GPU001 follows self.method() calls within the class, and a module-level instance's method calls", async () => {
  const viaSelf = [
    "import os",
    "import torch",
    "class Job:",
    "    def _probe(self):",
    "        return torch.cuda.get_device_name(0)",
    "    def run(self):",
    "        name = self._probe()",
    '        os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "",
  ].join("\n");
  const [a] = await lintCode(viaSelf, "GPU001");
  assert.deepEqual([a?.range.start.line, a?.related?.[0].range.start.line], [7, 4]);
  assert.match(a.message, /whenever `Job\.run\(\)` runs/);
  const instance = `${TRAINER}t = Trainer("0")\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\nt.setup()\n`;
  const found = (await lint(instance)).filter((x) => x.code === "GPU001").map((x) => x.range.start.line);
  // The module-level `Trainer("0")` runs __init__ (is_available freezes CUDA_VISIBLE_DEVICES, not the
  // allocator variable: ground truth); `t.setup()` runs the late write of line 10.
  assert.deepEqual(found, [9]);
});

test("GPU001 stays silent where no constructor ran or nothing initialised", async () => {
  const noInit = TRAINER.replace("torch.cuda.is_available()", "torch.cuda.device_count()");
  assert.deepEqual((await lintCode(noInit, "GPU001")).length, 0, "device_count() is lazy (ground truth)");
  const staticWrite = [
    "import os",
    "import torch",
    "class Boot:",
    "    def __init__(self):",
    "        torch.cuda.init()",
    "    @staticmethod",
    "    def pick():",
    '        os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "",
  ].join("\n");
  assert.deepEqual((await lintCode(staticWrite, "GPU001")).length, 0, "a static method runs without the constructor");
  // `t` is bound to a Trainer in another function: the call in `later` is not followed.
  const otherScope = `${TRAINER}def make():\n    t = Trainer("0")\ndef later(t):\n    t.setup()\n`;
  const d = (await lintCode(otherScope, "GPU001")).map((x) => x.message);
  assert.deepEqual(d.length, 1);
  assert.match(d[0], /whenever `Trainer\.setup\(\)` runs/);
});

test("GPU001 leaves test classes' methods out of the object-life timelines (a test sets a variable for the code it tests)", async () => {
  const body = [
    "    def test_flags(self):",
    "        jax.local_devices()",
    '        os.environ["XLA_FLAGS"] = "--xla_gpu_autotune_level=0"',
    "",
  ].join("\n");
  for (const head of ["class FlagsTest(absltest.TestCase):", "class FlagsTest(jtu.JaxTestCase):", "class TestFlags:"]) {
    const src = `import os\nimport jax\nfrom absl.testing import absltest\nimport jax._src.test_util as jtu\n${head}\n${body}`;
    assert.deepEqual((await lintCode(src, "GPU001")).length, 0, head);
  }
  const app = `import os\nimport jax\nclass Flags:\n${body}`;
  assert.deepEqual(
    (await lintCode(app, "GPU001")).map((d) => d.range.start.line),
    [5],
  );
});

test("GPU001 follows an instance's method call inside a function where the instance was made", async () => {
  const src = [
    "import os",
    "import torch",
    "class Probe:",
    "    def run(self):",
    "        torch.cuda.init()",
    "def main():",
    "    p = Probe()",
    "    p.run()",
    '    os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "main()",
    "",
  ].join("\n");
  assert.deepEqual(
    (await lintCode(src, "GPU001")).map((d) => [d.range.start.line, d.related?.[0].range.start.line]),
    [[8, 4]],
  );
});

test("GPU001 after an NCCL process group (measured: init_process_group('nccl') freezes CUDA_VISIBLE_DEVICES, not the allocator) and after TrainingArguments() (measured: context)", async () => {
  const nccl =
    'import os\nimport torch.distributed as dist\ndist.init_process_group("nccl")\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n';
  const found = await lintCode(nccl, "GPU001");
  assert.deepEqual(
    found.map((d) => d.range.start.line),
    [3],
  );
  assert.match(found[0].message, /initialised by torch\.distributed\.init_process_group\("nccl"\) \(line 3\)/);
  assert.deepEqual(await lintCode(nccl.replace('"nccl"', '"gloo"'), "GPU001"), []);
  assert.deepEqual(await lintCode(nccl.replace('"nccl"', "backend"), "GPU001"), []);
  const ta =
    'import os\nfrom transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out")\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n';
  const [d] = await lintCode(ta, "GPU001");
  assert.match(d.message, /initialised by transformers\.TrainingArguments\(\) \(line 3\)/);
  // Seq2SeqTrainingArguments (measured apart: verify/results-frameworks-h100-seq2seq-imports.json), also by its module path.
  for (const [imp, name] of [
    ["from transformers import Seq2SeqTrainingArguments", "Seq2SeqTrainingArguments"],
    ["from transformers.training_args_seq2seq import Seq2SeqTrainingArguments", "Seq2SeqTrainingArguments"],
  ]) {
    const s2s = ta.replace("from transformers import TrainingArguments", imp).replace("TrainingArguments(", `${name}(`);
    const [e, ...more] = await lintCode(s2s, "GPU001");
    assert.equal(more.length, 0, imp);
    assert.equal(e.severity, "error", imp);
    assert.match(
      e.message,
      /initialised by transformers\.(training_args_seq2seq\.)?Seq2SeqTrainingArguments\(\) \(line 3\)/,
      imp,
    );
  }
});

test("GPU001 walks only the uncalled functions whose timeline can hold a write: their own, a callee's, a method's", async () => {
  await initEngine();
  const { ModuleTrees } = await import("../../../server/src/engine/python/moduleTrees");
  const { buildModel } = await import("../../../server/src/engine/python/model");
  const { ModelCache } = await import("../../../server/src/engine/python/cache");
  const text = [
    "import os",
    "import torch",
    "",
    "def select():",
    '    os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "",
    "def setup():",
    "    torch.cuda.init()",
    "    select()",
    "",
    "def train_step(x):",
    '    if os.environ.get("DEBUG"):',
    "        print(torch.cuda.max_memory_allocated())",
    "    return x",
    "",
    "class Runner:",
    "    def pin(self):",
    '        os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"',
    "",
    "def run():",
    "    torch.zeros(1).cuda()",
    "    r = Runner()",
    "    r.pin()",
    "",
    "def evaluate():",
    "    return train_step(1)",
    "",
  ].join("\n");
  const names = (m: ReturnType<typeof buildModel>) =>
    m.functionTimelines.map((f) => `${f.owner ? f.owner + "." : ""}${f.def.childForFieldName("name")?.text}`);
  for (const cache of [undefined, new ModelCache()]) {
    const tree = ModuleTrees.parse(text, !!cache);
    try {
      const m = buildModel(tree, text, { eagerInitModules: [], torchBelow24: false }, [], cache);
      // train_step reads the environment (its text says `environ`) but writes nothing; evaluate calls only it.
      assert.deepEqual(names(m), ["select", "setup", "run"], cache ? "with kept facts" : "fresh");
    } finally {
      tree.delete();
    }
  }
  const found = (await lintAll(text, { select: ["GPU001"] })).map((d) => [
    d.range.start.line + 1,
    d.message.split(" is set")[0],
  ]);
  // select()'s write is late whenever setup() runs; pin()'s whenever run() runs (through `r.pin()`).
  assert.deepEqual(found, [
    [5, "CUDA_VISIBLE_DEVICES"],
    [18, "CUDA_DEVICE_ORDER"],
  ]);
});

test("GPU001 reports a removal of CUDA_VISIBLE_DEVICES after CUDA initialised (del and pop), with no fix; not one before the init, nor other rules", async () => {
  const text = [
    "import os",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    "import torch",
    'model = torch.nn.Linear(8, 8).to("cuda")',
    'del os.environ["CUDA_VISIBLE_DEVICES"]',
    'os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)',
    "",
  ].join("\n");
  const all = await lint(text);
  const ds = all.filter((d) => d.code === "GPU001");
  assert.deepEqual(
    ds.map((d) => [d.range.start.line, d.severity, d.fix ?? null]),
    [
      [4, "error", null],
      [5, "error", null],
    ],
  );
  assert.equal(
    ds[0].message,
    'CUDA_VISIBLE_DEVICES is removed after CUDA was initialised by .to("cuda") (line 4): the removal has no effect in this process (the program still sees only the GPUs it saw when CUDA initialised, numbered from 0)',
  );
  assert.deepEqual(ds[0].related?.[0].range.start, { line: 3, character: 8 });
  // A removal is no write for the other rules (GPU002, GPU003, GPU016 and the rest stay as they were).
  assert.deepEqual(
    all.filter((d) => d.code !== "GPU001").map((d) => d.code),
    [],
  );
  const before = await lint(
    'import os\ndel os.environ["CUDA_VISIBLE_DEVICES"]\nimport torch\nmodel = torch.nn.Linear(8, 8).cuda()\n',
  );
  assert.deepEqual(
    before.map((d) => d.code),
    [],
  );
});

test("GPU001 on a removal in a function: error when the function initialised CUDA first, warning when the module did; silent when a child process starts after it", async () => {
  const inFn = await lint(
    'import os\nimport torch\n\ndef serve():\n    torch.ones(1).cuda()\n    del os.environ["CUDA_VISIBLE_DEVICES"]\n',
  );
  assert.deepEqual(
    inFn
      .filter((d) => d.code === "GPU001")
      .map((d) => [d.range.start.line, d.severity, /whenever `serve\(\)` runs/.test(d.message)]),
    [[5, "error", true]],
  );
  const child = await lint(
    'import os\nimport subprocess\nimport torch\n\ntorch.ones(1).cuda()\nos.environ.pop("CUDA_VISIBLE_DEVICES", None)\nsubprocess.run(["python", "worker.py"])\n',
  );
  assert.deepEqual(
    child.filter((d) => d.code === "GPU001"),
    [],
  );
});

test("GPU001 leaves a removal that restores the environment: in a finally clause, or in an if whose other branch writes the saved value", async () => {
  const text = [
    "import os",
    "import torch",
    "",
    "def probe():",
    '    old = os.environ.get("CUDA_VISIBLE_DEVICES")',
    "    try:",
    "        return torch.cuda.is_available()",
    "    finally:",
    "        if old is None:",
    '            os.environ.pop("CUDA_VISIBLE_DEVICES", None)',
    "        else:",
    '            os.environ["CUDA_VISIBLE_DEVICES"] = old',
    "",
    "def restore(old):",
    "    torch.ones(1).cuda()",
    "    if old is None:",
    '        del os.environ["CUDA_VISIBLE_DEVICES"]',
    "    else:",
    '        os.environ["CUDA_VISIBLE_DEVICES"] = old',
    "",
  ].join("\n");
  assert.deepEqual(
    (await lint(text)).filter((d) => d.code === "GPU001" && /removed/.test(d.message)),
    [],
  );
});

test("GPU001: import paddle (the GPU build counts the GPUs at import, read in Paddle's source) freezes CUDA_VISIBLE_DEVICES; the message quotes the catalogue", async () => {
  const after = async (v: string) => await lint(`import os\nimport paddle\nos.environ["${v}"] = "1"\n`);
  const [d] = await after("CUDA_VISIBLE_DEVICES");
  assert.deepEqual([d.code, d.severity, d.range.start.line], ["GPU001", "error", 2]);
  assert.match(
    d.message,
    /initialised by import paddle \(line 2: paddle >=2\.1 initialises CUDA when imported \(read in /,
  );
  assert.deepEqual(
    (await after("PYTORCH_CUDA_ALLOC_CONF")).map((x) => x.code),
    [],
    "torch's allocator variable: Paddle's import does not start torch",
  );
});

test("GPU001: a `from` import that initialises is named as written (`from mmengine.runner import Runner`, not `import mmengine.runner.Runner`)", async () => {
  const text = [
    "import os",
    "from mmengine.runner import Runner",
    "from . import helpers",
    'os.environ["CUDA_VISIBLE_DEVICES"] = "1"',
    "",
  ].join("\n");
  const [d] = (await lint(text)).filter((x) => x.code === "GPU001");
  assert.equal(d.range.start.line, 3);
  assert.match(d.message, /initialised by from mmengine\.runner import Runner \(line 2: mmengine\.runner >=0\.3\.0 /);
  const paddle = (await lint('import os\nimport paddle.nn as pnn\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n')).find(
    (x) => x.code === "GPU001",
  );
  assert.match(paddle!.message, /initialised by import paddle\.nn \(line 2/);
});

// LitServe spawns each inference worker and calls the LitAPI's setup(device) there, after the
// worker has imported the module (its top-level imports run again): a write in setup comes after
// an import that initialises CUDA (catalogued: deepspeed) in every worker. In the default set.
const LIT_SERVER = [
  "import os",
  "import deepspeed",
  "import litserve as ls",
  "",
  "class Api(ls.LitAPI):",
  "    def setup(self, device):",
  '        os.environ["CUDA_VISIBLE_DEVICES"] = device.split(":")[-1]',
  "",
  'if __name__ == "__main__":',
  '    ls.LitServer(Api(), accelerator="cuda", devices="auto").run(port=8000)',
  "",
].join("\n");

test("GPU001: a write in LitAPI.setup after a module-level import that initialises CUDA", async () => {
  const found = (await lint(LIT_SERVER)).filter((d) => d.code === "GPU001");
  assert.equal(found.length, 1);
  assert.equal(found[0].range.start.line, 6);
  assert.equal(found[0].severity, "error");
  assert.equal(found[0].fix, undefined);
  assert.match(
    found[0].message,
    /whenever `Api\.setup\(\)` runs \(LitServe calls it in each inference worker it spawns/,
  );
  assert.equal((await lint(LIT_SERVER, { preview: false })).filter((d) => d.code === "GPU001").length, 1);
});

test("GPU001 stays silent on setup of a class that is no LitAPI, another method, or an import only __main__ runs", async () => {
  const notLit = LIT_SERVER.replace("class Api(ls.LitAPI):", "class Api:");
  const other = LIT_SERVER.replace("def setup(self, device):", "def prepare(self, device):");
  const mainOnly = LIT_SERVER.replace("import deepspeed\n", "").replace(
    'if __name__ == "__main__":\n',
    'if __name__ == "__main__":\n    import deepspeed\n',
  );
  for (const text of [notLit, other, mainOnly])
    assert.deepEqual(
      (await lint(text)).filter((d) => d.code === "GPU001"),
      [],
    );
});
