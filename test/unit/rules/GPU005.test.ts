import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintCode, applyFix } from "../support/helpers";
import { lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import { fixtureTests } from "./fixtureCheck";

fixtureTests("GPU005");

const C07 =
  'import os\nimport torch\n\ngpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0")\nbuf = torch.zeros(2, device=f"cuda:{gpu}")\n';

test("GPU005 sits on the device string, is an error and points at the read", async () => {
  const [d] = await lintCode(C07, "GPU005");
  assert.deepEqual(d.range, { start: { line: 4, character: 28 }, end: { line: 4, character: 41 } });
  assert.equal(d.severity, "error");
  assert.match(d.message, /`f"cuda:\{gpu\}"` uses the value of CUDA_VISIBLE_DEVICES \(line 4\)/);
  assert.match(d.message, /renumbers the visible GPUs from 0/);
  assert.match(d.message, /invalid device ordinal/);
  assert.deepEqual(d.related?.[0].range, { start: { line: 3, character: 6 }, end: { line: 3, character: 49 } });
});

test("GPU005 fix writes cuda:0 and the fixed file is clean", async () => {
  const [d] = await lintCode(C07, "GPU005");
  assert.equal(d.fix?.title, 'Use "cuda:0"');
  assert.equal(d.fix?.safe, false);
  const fixed = applyFix(C07, d);
  assert.equal(fixed, C07.replace('f"cuda:{gpu}"', '"cuda:0"'));
  assert.deepEqual(await lintCode(fixed, "GPU005"), []);
});

test("GPU005 keeps the quote style of the string it replaces", async () => {
  const src = "import os\nimport torch\nx = torch.ones(1, device=f'cuda:{os.environ[\"CUDA_VISIBLE_DEVICES\"]}')\n";
  const [d] = await lintCode(src, "GPU005");
  assert.equal(applyFix(src, d), "import os\nimport torch\nx = torch.ones(1, device='cuda:0')\n");
});

test("GPU005 integer ordinals: set_device(int(gpu)) becomes set_device(0)", async () => {
  const src = 'import os\nimport torch\ngpu = os.environ["CUDA_VISIBLE_DEVICES"]\ntorch.cuda.set_device(int(gpu))\n';
  const [d] = await lintCode(src, "GPU005");
  assert.deepEqual(d.range, { start: { line: 3, character: 22 }, end: { line: 3, character: 30 } });
  assert.match(d.message, /`torch\.cuda\.set_device\(int\(gpu\)\)`/);
  const fixed = applyFix(src, d);
  assert.equal(fixed, 'import os\nimport torch\ngpu = os.environ["CUDA_VISIBLE_DEVICES"]\ntorch.cuda.set_device(0)\n');
  assert.deepEqual(await lintCode(fixed, "GPU005"), []);
});

test("GPU005 also follows the value the file itself wrote to CUDA_VISIBLE_DEVICES", async () => {
  const src =
    'import os\nimport sys\nos.environ["CUDA_VISIBLE_DEVICES"] = str(sys.argv[1])\nimport torch\nx = torch.ones(1, device=f"cuda:{sys.argv[1]}")\n';
  // An element at a literal index is followed as a name is (MedMNIST/experiments#6: `str(gpu_ids[0])`
  // written, then `"cuda:{}".format(gpu_ids[0])`), within the function that wrote it.
  const [e, ...more] = await lintCode(src, "GPU005");
  assert.equal(more.length, 0);
  assert.match(e.message, /from `sys\.argv\[1\]` \(line 3\)/);
  const inFn = (use: string) =>
    `import os\nimport torch\n\n\ndef main(gpu_ids):\n    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu_ids[0])\n    ${use}\n\n\ndef other(gpu_ids):\n    return torch.device("cuda:{}".format(gpu_ids[0]))\n`;
  assert.deepEqual(
    (await lintCode(inFn('return torch.device("cuda:{}".format(gpu_ids[0]))'), "GPU005")).map(
      (d) => d.range.start.line,
    ),
    [6],
    "the use in main only: other() has its own gpu_ids",
  );
  assert.deepEqual(
    await lintCode(inFn('return torch.device("cuda:{}".format(gpu_ids[1]))'), "GPU005"),
    [],
    "another element",
  );
  assert.deepEqual(
    await lintCode(inFn('return torch.device("cuda:{}".format(gpu_ids[i]))'), "GPU005"),
    [],
    "a computed index",
  );
  const src2 =
    'import os\ngpu = "3"\nos.environ["CUDA_VISIBLE_DEVICES"] = gpu\nimport torch\nx = torch.ones(1, device=f"cuda:{gpu}")\n';
  const [d] = await lintCode(src2, "GPU005");
  assert.match(d.message, /uses the value written to CUDA_VISIBLE_DEVICES from `gpu` \(line 3\) as a device ordinal/);
  assert.equal(d.related?.[0].range.start.line, 2);
});

test("GPU005 never fires on renumbering by design or on counts", async () => {
  const src =
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "5"\nimport torch\nn = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))\nx = torch.ones(2, device="cuda:0")\ny = [torch.device(f"cuda:{i}") for i in range(n)]\n';
  assert.deepEqual(await lintCode(src, "GPU005"), []);
});

test("GPU005 torch.cuda device queries: get_device_capability(int(gpu)) over the visible ids (a generator), get_device_name(gpu), mem_get_info(device=gpu); counts and renumbered ordinals stay silent", async () => {
  const src = [
    "import os",
    "import torch",
    "",
    'visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0")',
    'ok = all(torch.cuda.get_device_capability(int(g))[0] >= 8 for g in visible.split(","))',
    'first = int(visible.split(",")[0])',
    "print(torch.cuda.get_device_name(first))",
    "free, total = torch.cuda.mem_get_info(device=first)",
    "for i in range(torch.cuda.device_count()):",
    "    print(torch.cuda.get_device_properties(i).name)",
    "",
  ].join("\n");
  const found = await lintCode(src, "GPU005");
  assert.deepEqual(
    found.map((d) => [d.range.start.line, d.severity]),
    [
      [4, "error"],
      [6, "error"],
      [7, "error"],
    ],
  );
  assert.match(found[0].message, /torch\.cuda\.get_device_capability\(int\(g\)\)/);
});

test("GPU005 a device string whose index was written to CUDA_VISIBLE_DEVICES, then used itself (gpustack#2484's shape, one function)", async () => {
  const fn = (write: string, use: string, between = "") =>
    [
      "import os",
      "import torch",
      "",
      "",
      "def load(args):",
      `    ${write}`,
      ...(between ? [`    ${between}`] : []),
      `    ${use}`,
      "",
    ].join("\n");
  const at = async (src: string) => (await lintCode(src, "GPU005")).map((d) => [d.range.start.line, d.fix ?? null]);
  const split = 'os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":")[1]';
  assert.deepEqual(
    await at(fn(split, "return torch.nn.Linear(2, 2).to(args.device)")),
    [[6, null]],
    "no fix: the device may be cpu",
  );
  const [d] = await lintCode(fn(split, "return torch.ones(2, device=torch.device(args.device))"), "GPU005");
  assert.match(
    d.message,
    /the device string `args\.device` whose index was written to CUDA_VISIBLE_DEVICES \(line 6\)/,
  );
  for (const write of [
    'os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":", 1)[-1]',
    'os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":")[-1] if "cuda" in args.device else ""',
    'os.environ["CUDA_VISIBLE_DEVICES"] = args.device.replace("cuda:", "")',
    'os.environ["CUDA_VISIBLE_DEVICES"] = str(torch.device(args.device).index)',
  ])
    assert.deepEqual((await at(fn(write, "return torch.nn.Linear(2, 2).to(args.device)"))).length, 1, write);
  // Silent: the string renumbered after the write, a copy of the environment for a child, a helper
  // between the string and the device (it may map cuda:3 to cuda:0), another element of the split.
  const silent = [
    fn(split, "return torch.nn.Linear(2, 2).to(args.device)", 'args.device = "cuda:0"'),
    fn(
      'env = dict(os.environ, CUDA_VISIBLE_DEVICES=args.device.split(":")[1])',
      "return torch.nn.Linear(2, 2).to(args.device)",
    ),
    fn(
      'env = os.environ.copy(); env["CUDA_VISIBLE_DEVICES"] = args.device.split(":")[1]',
      "return torch.nn.Linear(2, 2).to(args.device)",
    ),
    fn(split, "return torch.nn.Linear(2, 2).to(normalise(args.device))"),
    fn(
      'os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":")[0]',
      "return torch.nn.Linear(2, 2).to(args.device)",
    ),
    fn(split, 'return torch.nn.Linear(2, 2).to("cuda:0")'),
  ];
  for (const src of silent) assert.deepEqual(await lintCode(src, "GPU005"), [], src);
  // Another function's args is another object.
  const two = `${fn(split, "return 1")}\n\ndef other(args):\n    return torch.nn.Linear(2, 2).to(args.device)\n`;
  assert.deepEqual(await lintCode(two, "GPU005"), []);
});

test("GPU005 device-string uses: another branch of the writing if, a write after CUDA initialised, a same-file helper that ignores its device parameter stay silent", async () => {
  const lines = (...l: string[]) => ["import os", "import torch", "", "", ...l, ""].join("\n");
  const lines5 = async (src: string) => (await lintCode(src, "GPU005")).map((d) => d.range.start.line);
  // The string is used as the device only on the branch that did not write it (the cpu branch).
  const branches = (use: string) =>
    lines(
      "def predict(args):",
      '    if args.device.startswith("cuda"):',
      '        os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":", 1)[1]',
      '        device = torch.device("cuda")',
      "    else:",
      `        ${use}`,
      "    return torch.nn.Linear(2, 2).to(device)",
    );
  assert.deepEqual(await lintCode(branches("device = torch.device(args.device)"), "GPU005"), []);
  assert.deepEqual(
    await lintCode(
      lines(
        "def predict(args):",
        '    if args.device.startswith("cuda"):',
        '        os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":", 1)[1]',
        "        return torch.nn.Linear(2, 2).to(args.device)",
        '    elif args.device == "mps":',
        "        return torch.nn.Linear(2, 2).to(args.device)",
      ),
      "GPU005",
    ).then((d) => d.map((x) => x.range.start.line)),
    [7],
    "the same branch still fires, the elif does not",
  );
  // Written after torch.cuda.is_available() initialised CUDA: the write is ignored (GPU001), cuda:N exists.
  const frozen = (first: string) =>
    lines(
      "def main(args):",
      `    ${first}`,
      '    os.environ["CUDA_VISIBLE_DEVICES"] = args.device.split(":")[-1]',
      "    return torch.nn.Linear(2, 2).to(args.device)",
    );
  assert.deepEqual(await lintCode(frozen("ok = torch.cuda.is_available()"), "GPU005"), []);
  assert.deepEqual(await lines5(frozen("torch.manual_seed(0)")), [7]);
  // A helper of this file called with device=: silent when it never reads that parameter.
  const helper = (body: string) =>
    lines(
      "def epoch(model, device):",
      `    ${body}`,
      "",
      "",
      "def main(cfg):",
      '    device = cfg["device"]',
      '    os.environ["CUDA_VISIBLE_DEVICES"] = device.split(":")[-1]',
      "    epoch(None, device=device)",
    );
  assert.deepEqual(await lintCode(helper("return model"), "GPU005"), []);
  assert.deepEqual(await lines5(helper("return model.to(device)")), [11]);
});

test("GPU005 dev.index written to CUDA_VISIBLE_DEVICES where dev = torch.device(...): dev and dev.index no longer name a visible GPU", async () => {
  const fn = (...body: string[]) =>
    ["import os", "import torch", "", "", "def train(args):", ...body.map((b) => `    ${b}`), ""].join("\n");
  const at = async (src: string) => (await lintCode(src, "GPU005")).map((d) => [d.range.start.line, d.fix ?? null]);
  const dev = "device = torch.device(args.device)";
  const write = 'os.environ["CUDA_VISIBLE_DEVICES"] = str(device.index)';
  assert.deepEqual(await at(fn(dev, write, "torch.cuda.set_device(device)")), [[7, null]]);
  assert.deepEqual(await at(fn(dev, write, "torch.cuda.set_device(device.index)")), [[7, null]]);
  const [d] = await lintCode(fn(dev, write, "model = torch.nn.Linear(2, 2).to(device)"), "GPU005");
  assert.match(d.message, /the device `device` whose index was written to CUDA_VISIBLE_DEVICES \(line 7\)/);
  // Renumbered after the write, or not a torch.device of this function (a parameter): silent.
  assert.deepEqual(await at(fn(dev, write, "device = torch.device(0)", "torch.cuda.set_device(device)")), []);
  const param = [
    "import os",
    "import torch",
    "",
    "",
    "def run(device):",
    `    ${write}`,
    "    return torch.nn.Linear(2, 2).to(device)",
    "",
  ].join("\n");
  assert.deepEqual(await at(param), []);
});

test("GPU005 compares ids read from CUDA_VISIBLE_DEVICES with the device count only in preview", async () => {
  const src =
    'import os\nimport torch\nids = [int(i) for i in os.environ["CUDA_VISIBLE_DEVICES"].split(",")]\nassert max(ids) < torch.cuda.device_count()\n';
  assert.deepEqual(await lintCode(src, "GPU005"), []);
  const [d] = await lintCode(src, "GPU005", { preview: true });
  assert.deepEqual(d.range, { start: { line: 3, character: 7 }, end: { line: 3, character: 43 } });
  assert.match(d.message, /compares GPU ids read from CUDA_VISIBLE_DEVICES \(line 3\) with the number of visible GPUs/);
  assert.equal(d.fix, undefined);
  const counted = src.replace("max(ids)", "len(ids)");
  assert.deepEqual(await lintCode(counted, "GPU005", { preview: true }), []);
});

/** Lints `main` (written to a temporary project beside `files`) with the project index, GPU005 only. */
function lintWithProject(files: Record<string, string>, main: string, text: string) {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu005-"));
  for (const [name, body] of Object.entries({ ...files, [main]: text })) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), body);
  }
  const project = new ProjectIndex().lookupFor(join(dir, main), lookupOptions({}));
  const r = lintPython(text, { project, select: ["GPU005"] });
  r.tree?.delete();
  return r.diagnostics;
}

const HELPER =
  'import os\n\n\ndef pin_gpu(cfg):\n    if cfg.device.startswith("cuda:"):\n        index = cfg.device.split(":")[1]\n        os.environ["CUDA_VISIBLE_DEVICES"] = index\n';
const BACKEND =
  "import torch\nfrom helpers import pin_gpu\n\n\nclass Backend:\n    def __init__(self, cfg):\n        self._cfg = cfg\n        pin_gpu(cfg)\n\n    def load(self):\n        return torch.nn.Linear(2, 2).to(self._cfg.device)\n";

test("GPU005 across modules: a helper writes cfg.device's index, the constructor keeps cfg, a method uses self._cfg.device", () => {
  const [d, ...rest] = lintWithProject({ "helpers.py": HELPER }, "backend.py", BACKEND);
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "error");
  assert.equal(d.range.start.line, 10);
  assert.match(
    d.message,
    /`\.to\(self\._cfg\.device\)` uses the device string `self\._cfg\.device` \(kept from `cfg\.device`\) whose index pin_gpu\(\.\.\.\) writes to CUDA_VISIBLE_DEVICES \(at helpers\.py:7\) when called \(line 8\) as a device ordinal/,
  );
  assert.equal(d.fix, undefined);
  assert.equal(d.related?.length, 2);
  assert.equal(d.related?.[0].range.start.line, 7);
  assert.ok(d.related?.[1].file?.endsWith("helpers.py"));
  assert.equal(d.related?.[1].range.start.line, 6);
  // The helper renumbers the config after its write: silent.
  const fixed = HELPER + '        cfg.device = "cuda:0"\n';
  assert.deepEqual(lintWithProject({ "helpers.py": fixed }, "backend.py", BACKEND), []);
  // The class assigns the device itself, or calls a method of its own before the write: silent.
  const assigns = BACKEND.replace(
    "        pin_gpu(cfg)\n",
    '        pin_gpu(cfg)\n        self._cfg.device = "cuda:0"\n',
  );
  assert.deepEqual(lintWithProject({ "helpers.py": HELPER }, "backend.py", assigns), []);
  const before = BACKEND.replace("        self._cfg = cfg\n", "        self._cfg = cfg\n        self.load()\n");
  assert.deepEqual(lintWithProject({ "helpers.py": HELPER }, "backend.py", before), []);
});

test("the writers' scan lists a function that writes a given device string's index (the prefilter's names), which callableWrite does not answer for", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu005-scan-"));
  writeFileSync(join(dir, "helpers.py"), HELPER);
  writeFileSync(join(dir, "backend.py"), BACKEND);
  const project = new ProjectIndex().lookupFor(join(dir, "backend.py"), lookupOptions({}));
  assert.deepEqual([...(project.writerNames?.() ?? [])], ["pin_gpu"]);
  assert.equal(project.callableWrite?.("helpers.pin_gpu"), null);
  assert.equal(project.callableIndexWrite?.("helpers.pin_gpu")?.where, "helpers.py:7");
  // A torch file that names no such function is skipped without a parse.
  const other = lintPython("import torch\nx = torch.zeros(1)\n", { project, select: ["GPU005"] });
  other.tree?.delete();
  assert.equal(other.parsed, false);
});

test("GPU005 across modules: the caller uses the same attribute after the call, until something may change it", () => {
  const main =
    "import argparse\nimport torch\nfrom helpers import pin_gpu\n\n\ndef main():\n    args = argparse.ArgumentParser().parse_args()\n    pin_gpu(args)\n    model = torch.nn.Linear(2, 2).to(args.device)\n";
  const [d, ...rest] = lintWithProject({ "helpers.py": HELPER }, "main.py", main);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 8);
  assert.match(d.message, /`\.to\(args\.device\)` uses the device string `args\.device` whose index pin_gpu/);
  for (const between of ['    args.device = "cuda:0"\n', "    renumber(args)\n"])
    assert.deepEqual(
      lintWithProject({ "helpers.py": HELPER }, "main.py", main.replace("    model", `${between}    model`)),
      [],
      between,
    );
  // CUDA initialised before the call: the write changes nothing.
  const early = main.replace("    pin_gpu(args)\n", "    torch.cuda.is_available()\n    pin_gpu(args)\n");
  assert.deepEqual(lintWithProject({ "helpers.py": HELPER }, "main.py", early), []);
  // CUDA initialised at the top level of the module, which may call main() after it: silent.
  const top = main.replace("\n\n\ndef main", "\ntorch.cuda.is_available()\n\n\ndef main");
  assert.deepEqual(lintWithProject({ "helpers.py": HELPER }, "main.py", top), []);
});

test("GPU005 follows a function of the same file that writes its parameter's index", async () => {
  const src =
    'import os\nimport torch\n\n\ndef pin(device):\n    os.environ["CUDA_VISIBLE_DEVICES"] = device.split(":")[-1]\n\n\ndef main(device="cuda:1"):\n    pin(device)\n    return torch.zeros(1, device=device)\n';
  const [d, ...rest] = await lintCode(src, "GPU005");
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 10);
  assert.match(
    d.message,
    /`device=device` uses the device string `device` whose index pin\(\.\.\.\) writes to CUDA_VISIBLE_DEVICES \(at line 6\) when called \(line 10\)/,
  );
  // A helper that rebinds its parameter first writes another value.
  const rebinds = src.replace("    os.environ", '    device = "cuda:0"\n    os.environ');
  assert.deepEqual(await lintCode(rebinds, "GPU005"), []);
});
