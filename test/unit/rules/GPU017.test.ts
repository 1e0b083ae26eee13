import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lintCode } from "../support/helpers";
import { lintPython } from "../../../server/src/engine/lint";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import { fixtureTests } from "./fixtureCheck";

const TWO_H200 = {
  gpuCount: 2,
  uuids: ["GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f", "GPU-6486822f-842c-1320-f829-e4155c0d2130"],
};
fixtureTests("GPU017", { machine: TWO_H200, preview: true });

test("GPU017 is off when the machine is unknown", async () => {
  assert.deepEqual(await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "7"\n', "GPU017"), []);
});

test("GPU017 explains what CUDA keeps (ground truth: parsing stops at a missing id)", async () => {
  const [d] = await lintCode('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,7,0"\n', "GPU017", {
    machine: TWO_H200,
  });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /GPU 7 does not exist on this machine \(2 GPUs: 0\.\.1\)/);
  assert.match(d.message, /only 1 stays visible and 0 is dropped/);
});

test("GPU017 matches UUIDs and unique UUID prefixes against the inventory", async () => {
  const ok = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "GPU-6486822f-842c"\n';
  assert.deepEqual(await lintCode(ok, "GPU017", { machine: TWO_H200 }), []);
  const bad = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "GPU-00000000"\n';
  assert.equal((await lintCode(bad, "GPU017", { machine: TWO_H200 })).length, 1);
});

test("GPU017 reads a CUDA_VISIBLE_DEVICES copied from an argparse option as the option's default: what a run without it writes", async () => {
  const head =
    'import argparse\nimport os\nimport torch\np = argparse.ArgumentParser()\np.add_argument("--gpu-id", default="7", type=str)\nargs = p.parse_args()\n';
  const write = 'os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id\n';
  const [d, ...rest] = await lintCode(head + write, "GPU017", { machine: TWO_H200 });
  assert.equal(rest.length, 0);
  assert.deepEqual([d.range.start.line, d.range.start.character], [6, 0]);
  assert.equal(
    d.message,
    'CUDA_VISIBLE_DEVICES="7": GPU 7 does not exist on this machine (2 GPUs: 0..1); CUDA stops parsing there, so no GPU is visible (the default of --gpu-id, line 5: a run without --gpu-id writes it)',
  );
  // A default the machine has; a value the file changes; a namespace handed to code it does not see; a required option.
  assert.deepEqual(await lintCode(head.replace('"7"', '"1"') + write, "GPU017", { machine: TWO_H200 }), []);
  for (const text of [
    head + "args.gpu_id = '0'\n" + write,
    head + "import setup\nsetup.apply(args)\n" + write,
    head.replace('default="7", type=str', 'default="7", required=True') + write,
    head.replace("type=str", 'nargs="+"') + write,
  ])
    assert.deepEqual(await lintCode(text, "GPU017", { machine: TWO_H200 }), [], text);
  // Printing the options changes nothing.
  assert.equal((await lintCode(head + "print(args)\n" + write, "GPU017", { machine: TWO_H200 })).length, 1);
});

test("GPU017 (preview) compares the ordinals an argparse default gives with the machine", async () => {
  const src =
    'import argparse\nimport torch.nn as nn\np = argparse.ArgumentParser()\np.add_argument("--gpu_ids", default="0,1")\nargs = p.parse_args()\nids = list(map(int, args.gpu_ids.split(",")))\nnet = nn.DataParallel(nn.Linear(1, 1), ids)\n';
  const one = { gpuCount: 1, uuids: [] };
  assert.deepEqual(await lintCode(src, "GPU017", { machine: one }), []);
  const [d] = await lintCode(src, "GPU017", { machine: one, preview: true });
  assert.equal(d.range.start.line, 6);
  assert.match(d.message, /gets device 1 from the default of --gpu_ids \("0,1", line 4\)/);
  assert.deepEqual(await lintCode(src, "GPU017", { machine: TWO_H200, preview: true }), []);
});

test("GPU017 (preview) stays silent where the parser goes to a call or set_defaults may change a default", async () => {
  const head =
    'import argparse\nimport torch\nfrom cfg import extend\np = argparse.ArgumentParser()\np.add_argument("--gpu", type=int, default=1)\n';
  const use = "args = p.parse_args()\ntorch.cuda.set_device(args.gpu)\n";
  const one = { machine: { gpuCount: 1, uuids: [] }, preview: true };
  assert.equal((await lintCode(head + use, "GPU017", one)).length, 1);
  assert.deepEqual(await lintCode(head + "p = extend(p)\n" + use, "GPU017", one), []);
  assert.deepEqual(await lintCode(head + "p.set_defaults(gpu=0)\n" + use, "GPU017", one), []);
  // Read from the syntax tree: set_defaults named in a comment calls nothing.
  assert.equal((await lintCode(head + "# p.set_defaults(gpu=0)\n" + use, "GPU017", one)).length, 1);
});

test("GPU017 follows a YAML config loaded with a literal path into another module's constructor (an option's default: preview)", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu017-yaml-"));
  writeFileSync(join(dir, "cfg.yaml"), "name: run\ngpu: '1'\nlr: 0.1\n");
  writeFileSync(
    join(dir, "trainer.py"),
    "import torch\n\n\nclass Trainer:\n    def __init__(self, cfg):\n        self.cfg = cfg\n        self.device = torch.device(f\"cuda:{self.cfg['gpu']}\")\n",
  );
  const main =
    'from omegaconf import OmegaConf\nfrom trainer import Trainer\n\ncfg = OmegaConf.load("cfg.yaml")\nTrainer(cfg)\n';
  writeFileSync(join(dir, "main.py"), main);
  const lint = (text: string, gpuCount = 1, preview = true) => {
    const project = new ProjectIndex().lookupFor(join(dir, "main.py"), lookupOptions({}));
    const r = lintPython(text, { project, select: ["GPU017"], preview, machine: { gpuCount, uuids: [] } });
    r.tree?.delete();
    return r.diagnostics;
  };
  const [d, ...rest] = lint(main);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 4);
  assert.equal(
    d.message,
    'cfg.yaml sets gpu to 1 (line 2), and Trainer() uses cfg["gpu"] in f"cuda:{…}" (trainer.py:7), but this machine has 1 GPU (ordinals 0..0): invalid device ordinal at first use',
  );
  assert.deepEqual(lint(main, 2), [], "two GPUs: ordinal 1 exists");
  assert.equal(lint(main, 1, false).length, 1, "a literal path: the default set");
  // The config may change before the call, or the call's callee is unknown: silent.
  for (const between of ['cfg.gpu = "0"\n', "cfg = OmegaConf.merge(cfg, OmegaConf.from_cli())\n", "tweak(cfg)\n"])
    assert.deepEqual(lint(main.replace("Trainer(cfg)", between + "Trainer(cfg)")), [], between);
  // yaml.safe_load on a file opened by `with`.
  const withOpen =
    'import yaml\nfrom trainer import Trainer\n\nwith open("cfg.yaml") as f:\n    cfg = yaml.safe_load(f)\nTrainer(cfg)\n';
  assert.equal(lint(withOpen).length, 1);
  assert.deepEqual(lint(withOpen.replace("cfg.yaml", "other.yaml")), [], "a file that is not there");
  // The path as an argparse option's default: what a run without --config loads.
  const option =
    'import argparse\nimport yaml\nfrom trainer import Trainer\n\np = argparse.ArgumentParser()\np.add_argument("--config", default="cfg.yaml")\nargs = p.parse_args()\nwith open(args.config) as f:\n    cfg = yaml.safe_load(f)\nTrainer(cfg)\n';
  const [o] = lint(option);
  assert.match(o.message, /^cfg\.yaml \(the default of --config, line 6\) sets gpu to 1 \(line 2\)/);
  assert.deepEqual(lint(option, 1, false), [], "an option's default (a launch may pass --config): preview");
  assert.deepEqual(lint(option.replace("args = p", 'p.set_defaults(config="x.yaml")\nargs = p')), []);
});

test("GPU017 (preview) follows the argparse namespace into another module's function: the option's default", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu017-args-"));
  mkdirSync(join(dir, ".git"));
  writeFileSync(
    join(dir, "engine.py"),
    "import torch\n\n\ndef run(opts):\n    torch.cuda.set_device(opts.gpu)\n\n\ndef tuned(opts):\n    setup(opts)\n    torch.cuda.set_device(opts.gpu)\n",
  );
  const main =
    'import argparse\nimport engine\n\np = argparse.ArgumentParser()\np.add_argument("--gpu", type=int, default=1)\nargs = p.parse_args()\nengine.run(args)\n';
  writeFileSync(join(dir, "main.py"), main);
  const lint = (text: string) => {
    clearSlurmLaunchCache(); // folder listings are kept 5 s
    const project = new ProjectIndex().lookupFor(join(dir, "main.py"), lookupOptions({}));
    const r = lintPython(text, { project, select: ["GPU017"], preview: true, machine: { gpuCount: 1, uuids: [] } });
    r.tree?.delete();
    return r.diagnostics;
  };
  const [d, ...rest] = lint(main);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 6);
  assert.match(
    d.message,
    /^the default of --gpu is 1 \(line 5: a run without --gpu\), and engine\.run\(\) uses opts\.gpu in torch\.cuda\.set_device\(\) \(engine\.py:5\)/,
  );
  // The callee hands the namespace on before the use, the caller changes it, or hands it elsewhere: silent.
  assert.deepEqual(lint(main.replace("engine.run", "engine.tuned")), []);
  assert.deepEqual(lint(main.replace("engine.run(args)", "args.gpu = 0\nengine.run(args)")), []);
  assert.deepEqual(lint(main.replace("engine.run(args)", "prepare(args)\nengine.run(args)")), []);
  // A launch of the file documented next to it may pass --gpu.
  writeFileSync(join(dir, "README.md"), "Run:\n\n```bash\npython main.py --gpu 0\n```\n");
  assert.deepEqual(lint(main), []);
});

test("GPU017 (preview) compares a YAML list of ids that another module's function hands to DataParallel", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu017-yaml-ids-"));
  writeFileSync(join(dir, "cfg.yaml"), "seed: 1\ngpu_ids: [0, 1, 2]\n");
  writeFileSync(
    join(dir, "nets.py"),
    "import torch.nn as nn\n\n\ndef wrap(net, cfg):\n    return nn.DataParallel(net, device_ids=cfg['gpu_ids'])\n",
  );
  const main =
    'import yaml\nimport torch.nn as nn\nfrom nets import wrap\n\ncfg = yaml.safe_load(open("cfg.yaml"))\nnet = wrap(nn.Linear(1, 1), cfg)\n';
  const lint = (gpuCount: number) => {
    const project = new ProjectIndex().lookupFor(join(dir, "main.py"), lookupOptions({}));
    const r = lintPython(main, { project, select: ["GPU017"], preview: true, machine: { gpuCount, uuids: [] } });
    r.tree?.delete();
    return r.diagnostics;
  };
  const [d, ...rest] = lint(2);
  assert.equal(rest.length, 0);
  assert.equal(d.range.start.line, 5);
  assert.equal(
    d.message,
    'cfg.yaml sets gpu_ids to [0, 1, 2] (line 2), and wrap() uses cfg["gpu_ids"] in DataParallel(device_ids=…) (nets.py:5), but this machine has 2 GPUs (ordinals 0..1): device 2 does not exist (DataParallel: Invalid device id)',
  );
  assert.deepEqual(lint(3), []);
  // A section of the config handed over (`cfg["model"]`): its key under that section.
  writeFileSync(join(dir, "cfg.yaml"), "seed: 1\nmodel:\n  depth: 2\n  gpu_ids: [0, 2]\n");
  const section = main.replace("wrap(nn.Linear(1, 1), cfg)", 'wrap(nn.Linear(1, 1), cfg["model"])');
  const project = new ProjectIndex().lookupFor(join(dir, "main.py"), lookupOptions({}));
  const r = lintPython(section, { project, select: ["GPU017"], preview: true, machine: { gpuCount: 2, uuids: [] } });
  r.tree?.delete();
  assert.equal(r.diagnostics.length, 1);
  assert.match(r.diagnostics[0].message, /^cfg\.yaml sets model\.gpu_ids to \[0, 2\] \(line 4\)/);
  // A list element is no ordinal for a single-device use, nor a number for a list use.
  writeFileSync(join(dir, "cfg.yaml"), "seed: 1\ngpu_ids: 2\n");
  assert.deepEqual(lint(2), []);
});

test("GPU017 follows a literal passed to another module's class or function into a CUDA device use", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu017-passed-"));
  mkdirSync(join(dir, ".git"));
  mkdirSync(join(dir, "pkg"));
  writeFileSync(join(dir, "pkg", "__init__.py"), "");
  writeFileSync(
    join(dir, "pkg", "helpers.py"),
    [
      "import torch",
      "",
      "",
      "class Estimator:",
      "    def __init__(self, name, gpu_id=1):",
      "        self.gpu_id = gpu_id",
      "        torch.cuda.set_device(self.gpu_id)",
      "",
      "",
      "def place(net, gpu):",
      '    return net.to(f"cuda:{gpu}")',
      "",
      "",
      "def shifted(net, gpu):",
      "    gpu = gpu - 1",
      "    return net.cuda(gpu)",
      "",
      "",
      "def checked(net, gpu):",
      "    if gpu < torch.cuda.device_count():",
      "        return net.cuda(gpu)",
      "    return net",
      "",
      "",
      "def chosen(use_cpu, gpu):",
      "    if use_cpu:",
      '        return torch.device("cpu")',
      '    return torch.device("cuda", gpu)',
      "",
      "",
      "def tried(net, gpu):",
      "    try:",
      "        return net.cuda(gpu)",
      "    except RuntimeError:",
      "        return net",
      "",
    ].join("\n"),
  );
  const lint = (text: string, gpuCount = 1, preview = false, testModule = false) => {
    writeFileSync(join(dir, "main.py"), text);
    const project = new ProjectIndex().lookupFor(join(dir, "main.py"), lookupOptions({}));
    const machine = { gpuCount, uuids: [] };
    const r = lintPython(text, { project, select: ["GPU017"], preview, machine, testModule });
    r.tree?.delete();
    return r.diagnostics;
  };
  const head =
    "import torch\nfrom pkg.helpers import Estimator, place, shifted, checked, tried, chosen  # one per GPU\n";
  // By position, by keyword, and the signature's default where the call passes nothing.
  const [d, ...rest] = lint(head + 'e = Estimator("full", 1)\n');
  assert.equal(rest.length, 0);
  assert.deepEqual([d.range.start.line, d.range.start.character], [2, 22]);
  assert.equal(
    d.message,
    "Estimator() gets 1 as gpu_id and uses it in torch.cuda.set_device() (pkg/helpers.py:7), but this machine has 1 GPU (ordinals 0..0): invalid device ordinal at first use",
  );
  assert.equal(d.related?.[0].file, join(dir, "pkg", "helpers.py"));
  assert.equal(d.related?.[0].range.start.line, 6);
  assert.equal(lint(head + 'e = Estimator("full", gpu_id=1)\n').length, 1);
  // The prefilter: a caller that names no GPU, cuda or device is not read for this check (python3-torch
  // parsed 1,072 instead of 375 files with every importing file read).
  assert.deepEqual(lint(head.replace("  # one per GPU", "") + 'e = Estimator("full", 1)\n'), []);
  // The signature's default where the call passes nothing: followed for a class of the file itself, not
  // for another module's (whose summary is parsed only for a call that passes a literal).
  assert.deepEqual(lint(head + 'e = Estimator("full")\n'), []);
  const own =
    "import torch  # one per GPU\n\n\nclass Local:\n    def __init__(self, gpu_id=1):\n        torch.cuda.set_device(gpu_id)\n\n\nLocal()\n";
  const [omitted] = lint(own);
  assert.match(omitted.message, /^Local\(\) leaves gpu_id at its default 1 and uses it/);
  assert.deepEqual(lint(head + 'e = Estimator("full", 0)\n'), []);
  assert.deepEqual(lint(head + 'e = Estimator("full", 1)\n', 2), [], "two GPUs: ordinal 1 exists");
  assert.deepEqual(lint(head + 'e = Estimator("full", 1)\n', 1, false, true), [], "a test module");
  // A function, imported as a module alias.
  const [f] = lint("import torch\nimport pkg.helpers as h\nnet = h.place(torch.nn.Linear(1, 1), 3)  # GPU 3\n", 2);
  assert.match(f.message, /^h\.place\(\) gets 3 as gpu and uses it in f"cuda:\{…\}" \(pkg\/helpers\.py:11\)/);
  // Changed before the use, guarded by the GPU count, in a try, or an unknown callee: silent.
  for (const call of ["shifted(None, 1)", "checked(None, 1)", "tried(None, 1)", "other(None, 1)", "chosen(True, 1)"])
    assert.deepEqual(lint(head + "from pkg.other import other\n" + call + "\n"), [], call);
  // The caller guards the call, a `**kwargs` may fill the parameter, the file selects devices.
  for (const text of [
    head + 'if torch.cuda.device_count() > 1:\n    e = Estimator("full", 1)\n',
    head + 'kw = {"gpu_id": 0}\ne = Estimator("full", **kw)\n',
    head +
      '@unittest.skipIf(torch.cuda.device_count() < 2, "two GPUs")\ndef test_second():\n    Estimator("full", 1)\n',
    head + 'def test_second():\n    if torch.cuda.device_count() < 2:\n        return\n    Estimator("full", 1)\n',
    head + 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("GPUS", "0")\ne = Estimator("full", 1)\n',
  ])
    assert.deepEqual(lint(text), [], text);
});

test("GPU017 stays silent where the callee's module names CUDA_VISIBLE_DEVICES or assigns the kept attribute again", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu017-passed-visible-"));
  mkdirSync(join(dir, ".git"));
  const cls = (extra: string) =>
    `import torch\n${extra}\n\nclass Worker:\n    def __init__(self, gpu):\n        self.gpu = gpu\n        self.setup()\n        torch.cuda.set_device(self.gpu)\n\n    def setup(self):\n        pass\n`;
  const main = "from worker import Worker\nw = Worker(1)  # the second GPU\n";
  const lint = () => {
    const project = new ProjectIndex().lookupFor(join(dir, "main.py"), lookupOptions({}));
    const r = lintPython(main, { project, select: ["GPU017"], machine: { gpuCount: 1, uuids: [] } });
    r.tree?.delete();
    return r.diagnostics;
  };
  writeFileSync(join(dir, "main.py"), main);
  writeFileSync(join(dir, "worker.py"), cls("").replace("        self.setup()\n", ""));
  assert.equal(lint().length, 1);
  // A method of self called between the assignment and the use may change it.
  writeFileSync(join(dir, "worker.py"), cls(""));
  assert.deepEqual(lint(), []);
  writeFileSync(
    join(dir, "worker.py"),
    cls('import os\nos.environ.setdefault("CUDA_VISIBLE_DEVICES", "2")').replace("        self.setup()\n", ""),
  );
  assert.deepEqual(lint(), []);
  // Named in a comment only: no selection is made.
  writeFileSync(
    join(dir, "worker.py"),
    cls("# os.environ['CUDA_VISIBLE_DEVICES'] = '0,1'").replace("        self.setup()\n", ""),
  );
  assert.equal(lint().length, 1);
});

test("GPU017 follows a YAML config section that a constructor keeps and a method unpacks with ** into another module's DataParallel", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu017-splat-"));
  mkdirSync(join(dir, ".git"));
  writeFileSync(join(dir, "cfg.yaml"), "seed: 3\ninit:\n  gain: 1.0\n  gpu_ids: [0, 1, 2]\n");
  const helper =
    "import torch.nn as nn\n\n\ndef prepare(model, gain, gpu_ids):\n    model = nn.DataParallel(model, gpu_ids)\n    return model\n";
  const holder =
    "from helper import prepare\n\n\nclass Runner:\n    def __init__(self, model, init):\n        self.model = model\n        self.init = init\n\n    def start(self):\n        self.model = prepare(self.model, **self.init)\n";
  const main =
    'import yaml\nimport torch.nn as nn\nfrom holder import Runner\n\ncfg = yaml.safe_load(open("cfg.yaml"))\nrunner = Runner(nn.Linear(1, 1), cfg["init"])\nrunner.start()\n';
  const lint = (text: string, gpuCount = 2, files: Record<string, string> = {}) => {
    writeFileSync(join(dir, "helper.py"), files.helper ?? helper);
    writeFileSync(join(dir, "holder.py"), files.holder ?? holder);
    const project = new ProjectIndex().lookupFor(join(dir, "main.py"), lookupOptions({}));
    const r = lintPython(text, { project, select: ["GPU017"], machine: { gpuCount, uuids: [] } });
    r.tree?.delete();
    return r.diagnostics;
  };
  const [d, ...rest] = lint(main);
  assert.equal(rest.length, 0);
  assert.deepEqual([d.range.start.line, d.range.start.character], [5, 33]);
  assert.equal(
    d.message,
    'cfg.yaml sets init.gpu_ids to [0, 1, 2] (line 4), and Runner() uses init["gpu_ids"] in start() → prepare(**init) → DataParallel(device_ids=…) (helper.py:5), but this machine has 2 GPUs (ordinals 0..1): device 2 does not exist (DataParallel: Invalid device id)',
  );
  assert.deepEqual(lint(main, 3), [], "the machine has every id");
  assert.deepEqual(lint(main.replace("runner.start()\n", "")), [], "the method is never called");
  assert.deepEqual(lint(main.replace("runner.start()", "runner = None\nrunner.start()")), [], "bound again");
  for (const changed of [
    holder.replace("**self.init)", "gpu_ids=[0], **self.init)"),
    holder + '\n    def reset(self):\n        self.init["gpu_ids"] = [0]\n',
    holder + "\n    def reset(self):\n        self.init = {}\n",
    holder.replace("self.model = prepare", "self.init.update(gpu_ids=[0])\n        self.model = prepare"),
  ])
    assert.deepEqual(lint(main, 2, { holder: changed }), [], changed);
  const visible = 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2"\n' + helper;
  assert.deepEqual(lint(main, 2, { helper: visible }), [], "the callee's module selects GPUs");
  const counted = helper.replace(
    "    model = nn.DataParallel",
    "    if torch.cuda.device_count() > 1:\n        model = nn.DataParallel",
  );
  assert.deepEqual(lint(main, 2, { helper: "import torch\n" + counted }), [], "the callee counts GPUs");
  // A function of another module unpacking its own parameter.
  writeFileSync(
    join(dir, "direct.py"),
    "from helper import prepare\n\n\ndef build(model, init):\n    return prepare(model, **init)\n",
  );
  const [f] = lint(
    'import yaml\nimport torch.nn as nn\nfrom direct import build\n\ncfg = yaml.safe_load(open("cfg.yaml"))\nbuild(nn.Linear(1, 1), cfg["init"])\n',
  );
  assert.match(f.message, /build\(\) uses init\["gpu_ids"\] in prepare\(\*\*init\) → DataParallel/);
});

test("GPU017 follows an option's \"0,1\" default that another module's parse() turns into ints and returns, into a project function's DataParallel", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu017-optlist-"));
  mkdirSync(join(dir, ".git"));
  const options =
    'import argparse\n\n\nclass Opts:\n    def __init__(self):\n        self.parser = argparse.ArgumentParser()\n        self.parser.add_argument("--data", default="./data")\n        self.parser.add_argument("--gpu_ids", type=str, default="0,1")\n\n    def parse(self):\n        opt = self.parser.parse_args()\n        ids = []\n        for token in opt.gpu_ids.split(","):\n            g = int(token)\n            if g >= 0:\n                ids.append(g)\n        opt.gpu_ids = ids\n        print(vars(opt))\n        return opt\n';
  const nets =
    "import torch.nn as nn\n\n\ndef wrap(net, gpu_ids):\n    return nn.DataParallel(net, device_ids=gpu_ids)\n\n\ndef build(width, gpu_ids):\n    return wrap(nn.Linear(width, width), gpu_ids)\n";
  const train =
    "from nets import build\nfrom options import Opts\n\nopt = Opts().parse()\nnet = build(8, opt.gpu_ids)\nprint(opt.data)\n";
  const launch = (args?: string[]) => ({
    script: join(dir, "run.sh"),
    line: 1,
    nodes: "one" as const,
    from: "",
    documented: false,
    ...(args ? { args } : {}),
  });
  const lint = (
    o: {
      text?: string;
      nets?: string;
      options?: string;
      gpuCount?: number;
      preview?: boolean;
      launches?: ReturnType<typeof launch>[];
    } = {},
  ) => {
    writeFileSync(join(dir, "options.py"), o.options ?? options);
    writeFileSync(join(dir, "nets.py"), o.nets ?? nets);
    const project = new ProjectIndex().lookupFor(join(dir, "train.py"), lookupOptions({}));
    const r = lintPython(o.text ?? train, {
      project,
      select: ["GPU017"],
      preview: o.preview ?? false,
      machine: { gpuCount: o.gpuCount ?? 1, uuids: [] },
      ...(o.launches ? { launchNodes: o.launches } : {}),
    });
    r.tree?.delete();
    return r.diagnostics;
  };
  // Nothing starts train.py: a run may pass --gpu_ids (preview).
  assert.deepEqual(lint(), []);
  const [p] = lint({ preview: true });
  assert.deepEqual([p.range.start.line, p.range.start.character], [4, 15]);
  assert.equal(
    p.message,
    'opt.gpu_ids is [0, 1] from the default of --gpu_ids ("0,1", options.py:8: a run without --gpu_ids), and build() hands it to wrap() → DataParallel(device_ids=…) (nets.py:5), but this machine has 1 GPU (ordinals 0..0): device 1 does not exist (DataParallel: Invalid device id)',
  );
  // The project's one script starts it without the option: what runs is the default.
  const [d, ...rest] = lint({ launches: [launch(["--data", "./x"])] });
  assert.equal(rest.length, 0);
  assert.match(d.message, /the project's scripts start this file without it\)/);
  for (const args of [["--gpu_ids", "0"], ["--gpu=0"], undefined])
    assert.deepEqual(lint({ launches: [launch(args)], preview: true }), [], String(args));
  assert.deepEqual(lint({ launches: [launch(["--data", "x"]), launch()], preview: true }), [], "one launch not known");
  assert.deepEqual(lint({ gpuCount: 2, preview: true }), [], "the machine has both");
  assert.deepEqual(lint({ gpuCount: 0, preview: true }), [], "no GPU: DataParallel stays on the CPU");
  const caught = nets.replace(
    "    return wrap(nn.Linear(width, width), gpu_ids)\n",
    "    try:\n        return wrap(nn.Linear(width, width), gpu_ids)\n    except AssertionError:\n        return None\n",
  );
  assert.deepEqual(lint({ nets: caught, preview: true }), [], "the error is caught");
  // A comprehension in place converts too.
  const comprehension = options.replace(
    /ids = \[\]\n.*opt\.gpu_ids = ids\n/s,
    'opt.gpu_ids = [int(t) for t in opt.gpu_ids.split(",")]\n',
  );
  assert.equal(lint({ options: comprehension, preview: true }).length, 1);
  for (const changed of [
    options.replace("if g >= 0:", "if g > 0:"),
    options.replace("ids.append(g)", "ids.append(g)\n                break"),
    options.replace("        return opt", "        helper(opt)\n        return opt"),
    options.replace("        return opt", "        opt.gpu_ids = [0]\n        return opt"),
    options.replace('default="0,1"', 'default="0,1", nargs="+"'),
    options.replace("        return opt", "        return None"),
    options.replace("        return opt", '        os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"\n        return opt'),
  ])
    assert.deepEqual(lint({ options: changed, preview: true }), [], changed);
  for (const text of [
    train.replace("net = build", "opt.gpu_ids = [0]\nnet = build"),
    train.replace("net = build", "fix(opt)\nnet = build"),
    train.replace("net = build", "opt = None\nnet = build"),
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n' + train,
  ])
    assert.deepEqual(lint({ text, preview: true }), [], text);
  assert.equal(lint({ text: train.replace("print(opt.data)", "print(opt)"), preview: true }).length, 1, "printing");
  // Named in a comment only, in the options module or the file: no selection is made (the syntax tree's strings decide).
  const comment = "# run with CUDA_VISIBLE_DEVICES=0,1\n";
  assert.equal(lint({ options: comment + options, preview: true }).length, 1, "comment in the options module");
  assert.equal(lint({ text: comment + train, preview: true }).length, 1, "comment in the file");
});
