import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { launchedScriptFacts } from "../../../server/src/engine/launch/script";
import { lintNotebook } from "../../../server/src/engine/notebook";
import { lintManifest } from "../../../server/src/engine/manifests/lintManifest";

const TWO = { machine: { gpuCount: 2, uuids: [] } };
const ONE = { machine: { gpuCount: 1, uuids: [] } };

// The fixtures are linted as the files they are: GPU052 reads the script a launch line names beside it.
manifestFixtureTests("GPU052", TWO, true);

/** A folder holding `files`; returns the path of `name` in it. */
function folderWith(files: Record<string, string>): (name: string) => string {
  const dir = mkdtempSync(join(tmpdir(), "gpu052-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return (name) => join(dir, name);
}

const SCRIPT = [
  "import argparse",
  "import torch",
  "parser = argparse.ArgumentParser()",
  'parser.add_argument("--device_num", type=int, default=0)',
  "args = parser.parse_args()",
  "torch.cuda.set_device(args.device_num)",
  "",
].join("\n");

test("GPU052: an ordinal option beyond the inline CUDA_VISIBLE_DEVICES: warning on the option and its value, with or without a machine", () => {
  const at = folderWith({ "train.py": SCRIPT });
  const text = "CUDA_VISIBLE_DEVICES=3 python train.py --device_num 3\n";
  const [d, ...rest] = lintManifestCode(text, "jobscript", "GPU052", {}, at("run.sh"));
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 0, character: 39 }, end: { line: 0, character: 53 } });
  assert.equal(
    d.message,
    '--device_num gives train.py CUDA device 3 (torch.cuda.set_device() at train.py:6), but CUDA_VISIBLE_DEVICES=3 (given inline) leaves one device visible to it (ordinal 0): CUDA fails with "invalid device ordinal"; GPU 3 is ordinal 0 in this process: pass --device_num 0',
  );
  // On a machine without GPU 3 the list hides every GPU: GPU045 says so, and GPU052 stays out of it.
  assert.deepEqual(lintManifestCode(text, "jobscript", "GPU052", TWO, at("run.sh")), []);
  // CUDA stops at the first id the machine lacks: "1,5" on two GPUs leaves GPU 1 alone.
  const [s] = lintManifestCode(
    "CUDA_VISIBLE_DEVICES=1,5 python train.py --device_num 1\n",
    "jobscript",
    "GPU052",
    TWO,
    at("run.sh"),
  );
  assert.match(
    s.message,
    /leaves one device visible to it on this machine \(2 GPUs: parsing stops at 5\) \(ordinal 0\)/,
  );
  assert.match(s.message, /GPU 1 is ordinal 0 in this process: pass --device_num 0$/);
  const [m] = lintManifestCode("python train.py --device_num=1\n", "jobscript", "GPU052", ONE, at("run.sh"));
  assert.equal(
    m.message,
    '--device_num gives train.py CUDA device 1 (torch.cuda.set_device() at train.py:6), but this machine has 1 GPU (ordinal 0): CUDA fails with "invalid device ordinal"',
  );
  // Without a machine and without visible devices nothing is known; a valid ordinal is fine.
  assert.deepEqual(lintManifestCode("python train.py --device_num=1\n", "jobscript", "GPU052", {}, at("run.sh")), []);
  assert.deepEqual(lintManifestCode("python train.py --device_num=1\n", "jobscript", "GPU052", TWO, at("run.sh")), []);
  // A Slurm job script's GPUs are not this machine's.
  assert.deepEqual(
    lintManifestCode(
      "#!/bin/bash\n#SBATCH --gres=gpu:1\npython train.py --device_num=1\n",
      "jobscript",
      "GPU052",
      ONE,
      at("job.sh"),
    ),
    [],
  );
});

test("GPU052: the namespace reaches the device through parse_known_args, a returning function, a parameter and a name", () => {
  const facts = launchedScriptFacts(
    [
      "import argparse, torch",
      "def options():",
      "    p = argparse.ArgumentParser()",
      '    p.add_argument("-g", "--gpu-id", type=int)',
      '    p.add_argument("--rank", dest="which", type=int)',
      '    p.add_argument("--ids", type=int, nargs="+")',
      "    cfg, _ = p.parse_known_args()",
      "    return cfg",
      "def run(o):",
      "    dev = int(o.gpu_id)",
      "    torch.cuda.set_device(dev)",
      "    x = torch.zeros(1).cuda(o.which)",
      "    torch.nn.DataParallel(torch.nn.Linear(1, 1), device_ids=o.ids)",
      "run(options())",
      "",
    ].join("\n"),
  );
  assert.deepEqual(
    [...facts.options].map(([k, o]) => `${k}:${o.dest}:${o.notSingle}`),
    ["-g:gpu_id:false", "--gpu-id:gpu_id:false", "--rank:which:false", "--ids:ids:true"],
  );
  assert.deepEqual([...facts.deviceDests.keys()], ["gpu_id", "which"]);
  assert.deepEqual(facts.deviceDests.get("gpu_id"), { form: "torch.cuda.set_device()", line: 11, inString: false });
});

test("GPU052: silent where the script may use another value than the option's", () => {
  const base = SCRIPT.replace("torch.cuda.set_device(args.device_num)\n", "");
  for (const tail of [
    "args.device_num = 0\ntorch.cuda.set_device(args.device_num)\n", // the destination is assigned
    "setup(args)\ntorch.cuda.set_device(args.device_num)\n", // handed to a callee it does not define
    "vars(args).update({})\ntorch.cuda.set_device(args.device_num)\n", // changed through vars()
    "args.__dict__.update({})\ntorch.cuda.set_device(args.device_num)\n",
    "def f(args):\n    torch.cuda.set_device(args.device_num)\n", // a parameter nothing passes a namespace to
  ])
    assert.deepEqual([...launchedScriptFacts(base + tail).deviceDests.keys()], [], tail);
  // Printing and logging it changes nothing.
  assert.deepEqual(
    [
      ...launchedScriptFacts(
        base + "print(args)\nlogger.info(args)\ntorch.cuda.set_device(args.device_num)\n",
      ).deviceDests.keys(),
    ],
    ["device_num"],
  );
  // The script writes CUDA_VISIBLE_DEVICES itself: what it sees is its own business (GPU005 judges it).
  const at = folderWith({ "train.py": 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n' + SCRIPT });
  assert.deepEqual(lintManifestCode("python train.py --device_num 5\n", "jobscript", "GPU052", ONE, at("r.sh")), []);
});

test("GPU052 in a notebook: a `!python` line continued with backslashes, reported on the option's cell line", () => {
  const at = folderWith({ "train_saturn.py": SCRIPT });
  const cells = [
    { kind: "code" as const, text: "import os" },
    {
      kind: "code" as const,
      text: "!python3 train_saturn.py --in_data=runs.csv \\\n    --work_dir=. \\\n    --device_num=7\nprint('done')",
    },
  ];
  const r = lintNotebook(cells, ONE, undefined, at("tutorial.ipynb"));
  const d = r.diagnostics.filter((x) => x.code === "GPU052");
  assert.equal(d.length, 1);
  assert.equal(d[0].cell, 1);
  assert.deepEqual(d[0].range, { start: { line: 2, character: 4 }, end: { line: 2, character: 18 } });
  assert.deepEqual(r.deps, [at("train_saturn.py")]);
  // The continuation lines are IPython's, not Python: no syntax error comes of them.
  assert.deepEqual(
    r.diagnostics.filter((x) => x.code === "GPU000"),
    [],
  );
  // Without the notebook's path the script cannot be found: silent.
  assert.deepEqual(
    lintNotebook(cells, ONE).diagnostics.filter((x) => x.code === "GPU052"),
    [],
  );
});

test("GPU052 follows a namespace into a module beside the script: one that only reads it keeps the option, one that sets it silences, one not found silences", () => {
  const script = (call: string, imp: string) =>
    SCRIPT.replace("import torch\n", `import torch\n${imp}\n`).replace(
      "torch.cuda.set_device(args.device_num)",
      `${call}\ntorch.cuda.set_device(args.device_num)`,
    );
  const run = (files: Record<string, string>) =>
    lintManifestCode("python train.py --device_num 3\n", "jobscript", "GPU052", TWO, folderWith(files)("run.sh"));
  const reads = "def show(a):\n    print(a.device_num)\n";
  assert.equal(run({ "train.py": script("helpers.show(args)", "import helpers"), "helpers.py": reads }).length, 1);
  // A package's module, and a class imported from it.
  const pkg = folderWith({ "train.py": script("Arch(None, args)", "from nets.arch import Arch") });
  mkdirSync(pkg("nets"));
  writeFileSync(pkg("nets/arch.py"), "class Arch:\n    def __init__(self, model, args):\n        self.lr = args.lr\n");
  assert.equal(
    lintManifestCode("python train.py --device_num 3\n", "jobscript", "GPU052", TWO, pkg("run.sh")).length,
    1,
  );
  const sets = "def setup(a):\n    a.device_num = 0\n";
  assert.deepEqual(run({ "train.py": script("helpers.setup(args)", "import helpers"), "helpers.py": sets }), []);
  const dynamic = "def setup(a, cfg):\n    for k, v in cfg.items():\n        setattr(a, k, v)\n";
  assert.deepEqual(run({ "train.py": script("helpers.setup(args, {})", "import helpers"), "helpers.py": dynamic }), []);
  // A library (not beside the script) may set anything.
  assert.deepEqual(run({ "train.py": script("wandb.init(config=args)", "import wandb") }), []);
});

test("GPU052 reads the options of a module beside the script that returns the parsed namespace (from getArgs import get_args)", () => {
  const getArgs =
    'import argparse\n\n\ndef get_args():\n    p = argparse.ArgumentParser()\n    p.add_argument("--device", default="cuda:0")\n    return p.parse_args()\n';
  const train = (imp: string, call: string) =>
    `import torch\n${imp}\n\nargs = ${call}\ndevice = torch.device(f"{args.device}" if torch.cuda.is_available() else "cpu")\nmodel = torch.nn.Linear(2, 2).to(torch.device(args.device))\n`;
  for (const [imp, call] of [
    ["from getArgs import get_args", "get_args()"],
    ["import getArgs", "getArgs.get_args()"],
  ]) {
    const at = folderWith({ "getArgs.py": getArgs, "GCN.py": train(imp, call) });
    const [d, ...rest] = lintManifestCode(
      "for seed in 1 2; do\n  python GCN.py --device cuda:1 --seed $seed\ndone\n",
      "jobscript",
      "GPU052",
      ONE,
      at("run_all.sh"),
    );
    assert.equal(rest.length, 0, imp);
    assert.equal(
      d.message,
      '--device gives GCN.py CUDA device 1 (torch.device() at GCN.py:5), but this machine has 1 GPU (ordinal 0): CUDA fails with "invalid device ordinal"',
    );
  }
  // A module that only builds the parser declares the options; the script parses them itself.
  const builds = getArgs.replace("return p.parse_args()", "return p");
  const at = folderWith({
    "getArgs.py": builds,
    "GCN.py": train("from getArgs import get_args", "get_args().parse_args()"),
  });
  assert.equal(lintManifestCode("python GCN.py --device cuda:1\n", "jobscript", "GPU052", ONE, at("r.sh")).length, 1);
  // Two imported modules declaring the option for different destinations: not read.
  const other = 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--device", dest="where")\n';
  const two = folderWith({
    "getArgs.py": getArgs,
    "other.py": other,
    "GCN.py": train("from getArgs import get_args\nimport other", "get_args()"),
  });
  assert.deepEqual(lintManifestCode("python GCN.py --device cuda:1\n", "jobscript", "GPU052", ONE, two("r.sh")), []);
});

test("GPU052 reads a launched script open in the editor (LintOptions.openText) before the disk, and lists it in deps either way", () => {
  const at = folderWith({ "train.py": SCRIPT });
  const text = "CUDA_VISIBLE_DEVICES=0 python train.py --device_num 3\n";
  const noDevice = SCRIPT.replace("torch.cuda.set_device(args.device_num)\n", "");
  const asked: string[] = [];
  const opened = (open: Record<string, string>) => (path: string) => {
    asked.push(path);
    return open[path] ?? null;
  };
  // No document open there: the disk's script hands the option to CUDA.
  const disk = lintManifest(text, "jobscript", { openText: opened({}) }, { file: at("run.sh") });
  assert.deepEqual(
    disk.diagnostics.map((d) => d.code),
    ["GPU052"],
  );
  assert.deepEqual(disk.deps, [at("train.py")]);
  assert.ok(asked.includes(at("train.py")), asked.join());
  // The open (unsaved) text no longer does: silent, though the disk's still would.
  const open = lintManifest(
    text,
    "jobscript",
    { openText: opened({ [at("train.py")]: noDevice }) },
    { file: at("run.sh") },
  );
  assert.deepEqual(open.diagnostics, []);
  assert.deepEqual(open.deps, [at("train.py")]);
  // A script open in the editor and not yet on disk is read too; one over the read cap (4 MiB) is not.
  const fresh = folderWith({});
  const unsaved = lintManifest(
    text,
    "jobscript",
    { openText: opened({ [fresh("train.py")]: SCRIPT }) },
    { file: fresh("run.sh") },
  );
  assert.deepEqual(
    unsaved.diagnostics.map((d) => d.code),
    ["GPU052"],
  );
  const huge = SCRIPT + "#".repeat(4 * 1024 * 1024) + "\n";
  const big = lintManifest(
    text,
    "jobscript",
    { openText: opened({ [fresh("train.py")]: huge }) },
    { file: fresh("run.sh") },
  );
  assert.deepEqual([big.diagnostics, big.deps], [[], undefined]);
  // A notebook's shell line reads it the same way.
  const cells = [{ kind: "code" as const, text: "!CUDA_VISIBLE_DEVICES=0 python train.py --device_num 3" }];
  const nb = (o: Record<string, string>) => lintNotebook(cells, { openText: opened(o) }, undefined, at("nb.ipynb"));
  assert.deepEqual(
    nb({}).diagnostics.map((d) => d.code),
    ["GPU052"],
  );
  assert.deepEqual(nb({ [at("train.py")]: noDevice }).diagnostics, []);
  assert.deepEqual(nb({ [at("train.py")]: noDevice }).deps, [at("train.py")]);
});

const HYDRA_TASK = [
  "import hydra",
  "import lightning as L",
  "",
  '@hydra.main(version_base=None, config_path="conf", config_name="base")',
  "def train(cfg):",
  "    model = build(cfg.model.name)",
  '    trainer = L.Trainer(accelerator="gpu", devices=cfg.trainer.gpus, max_epochs=cfg.epochs)',
  "    trainer.fit(model)",
  "",
  'if __name__ == "__main__":',
  "    train()",
  "",
].join("\n");

test("GPU052: a Hydra override that gives Lightning's Trainer more GPUs than the script leaves visible", () => {
  const preview = { preview: true };
  const at = folderWith({ "fit.py": HYDRA_TASK });
  const text = "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=3\npython fit.py model.name=small trainer.gpus=3 epochs=4\n";
  const [d, ...rest] = lintManifestCode(text, "jobscript", "GPU052", preview, at("go.sh"));
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 31 }, end: { line: 2, character: 45 } });
  assert.equal(
    d.message,
    'trainer.gpus=3 gives fit.py 3 GPUs for Lightning (Trainer(devices=cfg.trainer.gpus) at fit.py:7: GPUs [0, 1, 2]), but CUDA_VISIBLE_DEVICES=3 (exported on line 2) leaves one device visible to it: Lightning stops with "You requested gpu: [0, 1, 2] But your machine only has: [0]"; pass trainer.gpus=1 or make 3 GPUs visible',
  );
  // In the default set: Lightning certainly stops (its device parser's MisconfigurationException).
  assert.equal(lintManifestCode(text, "jobscript", "GPU052", {}, at("go.sh")).length, 1);
  // Another value of the config changed, or the config handed on after the Trainer: still reported.
  const other = HYDRA_TASK.replace("    model = build(", "    cfg.lr *= cfg.trainer.gpus\n    model = build(").replace(
    "    trainer.fit(model)",
    "    trainer.fit(model)\n    report(cfg)",
  );
  const at2 = folderWith({ "fit.py": other });
  assert.equal(lintManifestCode(text, "jobscript", "GPU052", preview, at2("go.sh")).length, 1);
  // Without an export, the machine's GPUs; `+`/`++` overrides and a once-assigned literal count too.
  const machine = { ...preview, ...ONE };
  assert.equal(
    lintManifestCode("python fit.py ++trainer.gpus=2\n", "jobscript", "GPU052", machine, at("a.sh")).length,
    1,
  );
  assert.equal(
    lintManifestCode("N=2\npython fit.py +trainer.gpus=$N\n", "jobscript", "GPU052", machine, at("b.sh")).length,
    1,
  );
});

test("GPU052: silent where the Hydra count fits, or the override, the task or the devices cannot be read", () => {
  const preview = { preview: true, ...TWO };
  const silent = (files: Record<string, string>, sh: string) =>
    assert.deepEqual(lintManifestCode(sh, "jobscript", "GPU052", preview, folderWith(files)("go.sh")), [], sh);
  const task = { "fit.py": HYDRA_TASK };
  silent(task, "CUDA_VISIBLE_DEVICES=0,1 python fit.py trainer.gpus=2\n");
  silent(task, "python fit.py trainer.gpus=2\n");
  silent(task, "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=1\n");
  // Not an override: an option, a variable that may hold more overrides, a key given twice, a sweep, an unknown value.
  silent(task, "CUDA_VISIBLE_DEVICES=0 python fit.py -m trainer.gpus=2\n");
  silent(task, "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2 $EXTRA\n");
  silent(task, "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2 trainer.gpus=1\n");
  silent(task, "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=1,2\n");
  silent(task, "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=$G\n");
  silent(task, "CUDA_VISIBLE_DEVICES=$GPU python fit.py trainer.gpus=2\n");
  // Another key, or a task that may change its config, a CPU accelerator, `**` arguments, or a script that writes the variable.
  silent(task, "CUDA_VISIBLE_DEVICES=0 python fit.py epochs=2\n");
  const variant = (from: string, to: string) => ({ "fit.py": HYDRA_TASK.replace(from, to) });
  silent(
    variant("    model = build(", "    setup(cfg)\n    model = build("),
    "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n",
  );
  silent(
    variant("    model = build(", "    cfg.trainer.gpus = 1\n    model = build("),
    "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n",
  );
  silent(
    variant("    model = build(", "    cfg.trainer = {}\n    model = build("),
    "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n",
  );
  silent(
    variant("    model = build(", "    cfg = load()\n    model = build("),
    "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n",
  );
  silent(variant('accelerator="gpu"', 'accelerator="cpu"'), "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n");
  silent(variant('accelerator="gpu"', "**cfg.extra"), "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n");
  silent(
    variant("import hydra", 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\nimport hydra'),
    "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n",
  );
  silent(
    variant("import lightning as L", "import mylib as L"),
    "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n",
  );
  silent({}, "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n");
  // Named in a comment only, the script makes no selection: still reported.
  assert.equal(
    lintManifestCode(
      "CUDA_VISIBLE_DEVICES=0 python fit.py trainer.gpus=2\n",
      "jobscript",
      "GPU052",
      preview,
      folderWith(variant("import hydra", "# run with CUDA_VISIBLE_DEVICES=0,1\nimport hydra"))("go.sh"),
    ).length,
    1,
  );
});
