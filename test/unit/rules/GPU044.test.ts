import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { lintCode, applyFix, projectTree } from "../support/helpers";
import { ProjectIndex, lookupOptions } from "../../../server/src/engine/python/project";
import type { LintDiagnostic } from "../../../server/src/engine/types";
import { fixtureTests } from "./fixtureCheck";
import { DISTRIBUTED_LAUNCH, TORCHRUN } from "../support/slurmLaunches";
import { resolveLintOptions } from "../../../server/src/engine/options";
import { clearSlurmLaunchCache } from "../../../server/src/engine/slurmLaunch";
import { pinsTorchBelow20 } from "../../../server/src/engine/config";

fixtureTests("GPU044", { preview: true, slurm: [DISTRIBUTED_LAUNCH] });

const SRC =
  'import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", default=0, type=int)\nargs = parser.parse_args()\nprint(args.local_rank)\n';

test("GPU044: --local_rank alone under torch.distributed.launch: warning on the option string, naming the launch; the fix adds --local-rank", async () => {
  const [d, ...rest] = await lintCode(SRC, "GPU044", { slurm: [DISTRIBUTED_LAUNCH] });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 3, character: 20 }, end: { line: 3, character: 34 } });
  assert.equal(
    d.message,
    'run.sh (line 4) starts this file with python -m torch.distributed.launch, which passes --local-rank=<rank> since torch 2.0, but the parser declares only --local_rank: parse_args() exits in every worker with "error: unrecognized arguments: --local-rank=<rank>" (PyTorch\'s launcher documentation); accept both spellings, or start with torchrun and read LOCAL_RANK',
  );
  const fixed = applyFix(SRC, d);
  assert.equal(fixed, SRC.replace('"--local_rank",', '"--local_rank", "--local-rank",'));
  assert.deepEqual(await lintCode(fixed, "GPU044", { slurm: [DISTRIBUTED_LAUNCH] }), []);
  // The fix keeps the quote style.
  const single = SRC.replace('"--local_rank"', "'--local_rank'");
  const [s] = await lintCode(single, "GPU044", { slurm: [DISTRIBUTED_LAUNCH] });
  assert.equal(applyFix(single, s), single.replace("'--local_rank',", "'--local_rank', '--local-rank',"));
});

test("GPU044: silent without such a launch, under torchrun or --use-env, on torch < 2.0, with both spellings, and with parse_known_args", async () => {
  assert.deepEqual(await lintCode(SRC, "GPU044"), []);
  assert.deepEqual(await lintCode(SRC, "GPU044", { slurm: [TORCHRUN] }), []);
  assert.deepEqual(
    await lintCode(SRC, "GPU044", { slurm: [{ ...DISTRIBUTED_LAUNCH, passesLocalRankArg: false }] }),
    [],
  );
  assert.deepEqual(await lintCode(SRC, "GPU044", { slurm: [DISTRIBUTED_LAUNCH], torchBelow20: true }), []);
  assert.deepEqual(
    await lintCode(SRC.replace('"--local_rank",', '"--local_rank", "--local-rank",'), "GPU044", {
      slurm: [DISTRIBUTED_LAUNCH],
    }),
    [],
  );
  assert.deepEqual(
    await lintCode(SRC.replace("parser.parse_args()", "parser.parse_known_args()[0]"), "GPU044", {
      slurm: [DISTRIBUTED_LAUNCH],
    }),
    [],
  );
  assert.deepEqual(
    await lintCode(SRC.replace("parser.parse_args()", "parser.parse_args(argv)"), "GPU044", {
      slurm: [DISTRIBUTED_LAUNCH],
    }),
    [],
  );
});

test("GPU044 torch pins: below 2.0 only", () => {
  assert.deepEqual(["==1.13.1", "<2.0", ">=1.10,<1.14", "~=1.12.0", "==1.8.1+cu111"].map(pinsTorchBelow20), [
    true,
    true,
    true,
    true,
    true,
  ]);
  assert.deepEqual(["", ">=1.13", "==2.0.1", ">=2.1", "<2.5"].map(pinsTorchBelow20), [
    false,
    false,
    false,
    false,
    false,
  ]);
});

test("GPU044 end to end: the shell script beside the file is found; --use-env, torchrun and a torch<2.0 pin keep it silent", async () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-gpu044-"));
  try {
    mkdirSync(join(root, ".git"));
    writeFileSync(join(root, "train.py"), SRC);
    const run = async (script: string, requirements?: string, target?: string) => {
      writeFileSync(join(root, "run.sh"), `#!/bin/bash\nNUM=$1\nshift\n${script}\n`);
      if (requirements !== undefined) writeFileSync(join(root, "requirements.txt"), requirements);
      else rmSync(join(root, "requirements.txt"), { force: true });
      clearSlurmLaunchCache();
      const { options } = resolveLintOptions(
        join(root, "train.py"),
        target ? { targetTorch: target } : {},
        "editorOnly",
      );
      return (await lintCode(SRC, "GPU044", options)).map((d) => d.range.start.line);
    };
    assert.deepEqual(await run('python3 -m torch.distributed.launch --nproc_per_node=$NUM train.py "$@"'), [3]);
    assert.deepEqual(await run("python -m torch.distributed.launch --use_env --nproc_per_node 2 train.py"), []);
    assert.deepEqual(await run("python -m torch.distributed.run --nproc_per_node 2 train.py"), []);
    assert.deepEqual(await run("torchrun --nproc_per_node 2 train.py"), []);
    assert.deepEqual(
      await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", "torch==1.12.1\n"),
      [],
    );
    assert.deepEqual(await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", "torch>=1.13\n"), [3]);
    assert.deepEqual(
      await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", undefined, "1.13"),
      [],
    );
    assert.deepEqual(
      await run("python -m torch.distributed.launch --nproc_per_node 2 train.py", undefined, "2.1"),
      [3],
    );
    // The launcher's options in a variable: read when the script assigns it once to a literal
    // (a string or an array); one that is not known may hold --use_env: silent.
    assert.deepEqual(
      await run('OPTS="--nproc_per_node 2 --master_port 29501"\npython -m torch.distributed.launch $OPTS train.py'),
      [3],
    );
    assert.deepEqual(
      await run("OPTS=(--nproc_per_node 2)\npython -m torch.distributed.launch ${OPTS[@]} train.py"),
      [3],
    );
    assert.deepEqual(
      await run('OPTS="--nproc_per_node 2 --use_env"\npython -m torch.distributed.launch $OPTS train.py'),
      [],
    );
    assert.deepEqual(await run("python -m torch.distributed.launch $LAUNCH_OPTS train.py"), []);
    assert.deepEqual(
      await run('OPTS="--nproc_per_node $NUM"\npython -m torch.distributed.launch "${OPTS[@]}" train.py'),
      [],
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('GPU044: a launch of "$(dirname "$0")/train.py" (mmocr\'s tools/dist_train.sh) starts the train.py beside the script, not one elsewhere', async () => {
  const root = mkdtempSync(join(tmpdir(), "gpu-pilot-gpu044-dirname-"));
  try {
    mkdirSync(join(root, ".git"));
    mkdirSync(join(root, "tools"));
    const line = (path: string) =>
      `#!/usr/bin/env bash\npython -m torch.distributed.launch --nproc_per_node="$2" \\\n    ${path} "$1" --launcher pytorch\n`;
    const at = async (file: string) => {
      clearSlurmLaunchCache();
      const { options } = resolveLintOptions(join(root, file), {}, "editorOnly");
      return (await lintCode(SRC, "GPU044", options)).map((d) => d.range.start.line);
    };
    for (const form of [
      '"$(dirname "$0")/train.py"',
      "$(dirname $0)/train.py",
      '"$(dirname "${BASH_SOURCE[0]}")/train.py"',
      "`dirname $0`/train.py",
    ]) {
      writeFileSync(join(root, "tools", "dist_train.sh"), line(form));
      assert.deepEqual(await at("tools/train.py"), [3], form);
      assert.deepEqual(await at("train.py"), [], `${form}: the root's train.py is another file`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// A launched entry point whose parser lives in another module of the project: run_dist.sh starts
// main.py, whose run() calls trainer.boot.start(), which calls trainer.options.read_options(): the
// option is declared by a helper of options.py and parsed by read_options().
const LAUNCH =
  "#!/bin/bash\n# four workers on this node\npython -m torch.distributed.launch --nproc_per_node 4 \\\n    main.py --epochs 3\n";
const MAIN =
  '"""Entry point: trains a small classifier."""\nfrom trainer.boot import start\n\n\ndef run():\n    cfg = start()\n    print(cfg.epochs)\n\n\nif __name__ == "__main__":\n    run()\n';
const BOOT =
  "import torch\n\nfrom trainer.options import read_options\n\n\ndef start():\n    cfg = read_options()\n    torch.cuda.set_device(cfg.local_rank)\n    return cfg\n";
const OPTIONS =
  'import argparse\n\n\ndef _launcher_options(parser):\n    parser.add_argument("--local_rank", type=int, default=0)\n    return parser\n\n\ndef read_options():\n    parser = argparse.ArgumentParser()\n    parser.add_argument("--epochs", type=int, default=1)\n    _launcher_options(parser)\n    return parser.parse_args()\n';
const REACHED = {
  "scripts/run_dist.sh": LAUNCH,
  "main.py": MAIN,
  "trainer/__init__.py": "",
  "trainer/boot.py": BOOT,
  "trainer/options.py": OPTIONS,
  "requirements.txt": "torch>=2.1\nnumpy\n",
};

/** A project (a `.git` folder marks its root) holding `files`; removed by the caller. */
function gitProject(files: Record<string, string>): string {
  const root = projectTree(files);
  mkdirSync(join(root, ".git"));
  return root;
}

/** GPU044's findings on `rel` of `root`, linted as the CLI does (options resolved, a project index), with the lookup's dependencies. */
async function lintIn(root: string, rel: string): Promise<{ found: LintDiagnostic[]; deps: string[] }> {
  clearSlurmLaunchCache();
  const file = join(root, rel);
  const { options } = resolveLintOptions(file, {}, "editorOnly");
  const project = new ProjectIndex().lookupFor(file, lookupOptions(options));
  const found = await lintCode(readFileSync(file, "utf8"), "GPU044", { ...options, project });
  return { found, deps: [...project.deps()].map((d) => relative(root, d).split(sep).join("/")).sort() };
}

const lines = async (root: string, rel: string) => (await lintIn(root, rel)).found.map((d) => d.range.start.line);

test("GPU044 across modules: the option declared in trainer/options.py, whose parser main.py (started by run_dist.sh) reaches through trainer/boot.py, is reported there with the launch and the calls", async () => {
  const root = gitProject(REACHED);
  try {
    const { found, deps } = await lintIn(root, "trainer/options.py");
    assert.equal(found.length, 1);
    const [d] = found;
    assert.equal(d.severity, "warning");
    assert.deepEqual(d.range, { start: { line: 4, character: 24 }, end: { line: 4, character: 38 } });
    assert.equal(
      d.message,
      'run_dist.sh (line 3) starts main.py with python -m torch.distributed.launch, which passes --local-rank=<rank> since torch 2.0, and its calls reach this parser (main.py:6 → trainer/boot.py:7), which declares only --local_rank: parse_args() exits in every worker with "error: unrecognized arguments: --local-rank=<rank>" (PyTorch\'s launcher documentation); accept both spellings, or start with torchrun and read LOCAL_RANK',
    );
    assert.deepEqual(d.related, [
      {
        range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } },
        message: "python -m torch.distributed.launch starts main.py here",
        file: join(root, "scripts", "run_dist.sh"),
      },
      {
        range: { start: { line: 5, character: 10 }, end: { line: 5, character: 17 } },
        message: "call 1 of 2 on the way to this parser",
        file: join(root, "main.py"),
      },
      {
        range: { start: { line: 6, character: 10 }, end: { line: 6, character: 24 } },
        message: "call 2 of 2 on the way to this parser",
        file: join(root, "trainer", "boot.py"),
      },
    ]);
    assert.equal(applyFix(OPTIONS, d), OPTIONS.replace('"--local_rank",', '"--local_rank", "--local-rank",'));
    // The files the answer read are the finding's dependencies (the CLI's cache, the editor's re-lint).
    assert.deepEqual(deps, ["main.py", "trainer/boot.py"]);
    // The modules on the way report nothing themselves.
    assert.deepEqual(await lines(root, "trainer/boot.py"), []);
    assert.deepEqual(await lines(root, "main.py"), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("GPU044 across modules: silent for the fixed parser, with parse_known_args, under --use-env, with a torch < 2.0 pin beside the started file, and where a file on the way declares --local-rank", async () => {
  const cases: Array<[string, Record<string, string>]> = [
    ["both spellings", { "trainer/options.py": OPTIONS.replace('"--local_rank",', '"--local_rank", "--local-rank",') }],
    [
      "parse_known_args",
      { "trainer/options.py": OPTIONS.replace("parser.parse_args()", "parser.parse_known_args()[0]") },
    ],
    ["--use-env", { "scripts/run_dist.sh": LAUNCH.replace("launch --nproc", "launch --use-env --nproc") }],
    ["torchrun", { "scripts/run_dist.sh": LAUNCH.replace("python -m torch.distributed.launch", "torchrun") }],
    ["torch 1.13", { "requirements.txt": "torch==1.13.1\n" }],
    [
      "--local-rank in main.py",
      { "main.py": MAIN + '\n\ndef extra(parser):\n    parser.add_argument("--local-rank", dest="local_rank")\n' },
    ],
  ];
  for (const [what, change] of cases) {
    const root = gitProject({ ...REACHED, ...change });
    try {
      assert.deepEqual(await lines(root, "trainer/options.py"), [], what);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
});

test("GPU044 across modules: silent where the chain passes through a call it cannot resolve, for a declaring module no started file reaches, and beyond three modules", async () => {
  // main.py runs start() through a list of steps: the call `step()` names no function.
  const root = gitProject({
    ...REACHED,
    "main.py":
      "from trainer import boot\n\nSTEPS = [boot.start]\n\n\ndef run():\n    for step in STEPS:\n        step()\n\n\nrun()\n",
    "tools/export_weights.py":
      'import argparse\n\n\ndef main():\n    p = argparse.ArgumentParser()\n    p.add_argument("--local_rank", type=int)\n    return p.parse_args()\n',
  });
  try {
    assert.deepEqual(await lines(root, "trainer/options.py"), []);
    // tools/export_weights.py parses --local_rank, but no started file calls it.
    assert.deepEqual(await lines(root, "tools/export_weights.py"), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  // main.py → a → b → c → options: four modules deep is not followed; three is.
  const chain = (modules: string[]) => {
    const files: Record<string, string> = { ...REACHED, "main.py": `from trainer.${modules[0]} import go\n\ngo()\n` };
    modules.forEach((m, i) => {
      const next = modules[i + 1];
      files[`trainer/${m}.py`] = next
        ? `from trainer import ${next}\n\n\ndef go():\n    return ${next}.go()\n`
        : "from trainer.options import read_options\n\n\ndef go():\n    return read_options()\n";
    });
    return files;
  };
  for (const [modules, want] of [
    [["a", "b"], [4]],
    [["a", "b", "c"], []],
  ] as const) {
    const deep = gitProject(chain([...modules]));
    try {
      assert.deepEqual(await lines(deep, "trainer/options.py"), want, modules.join(" → "));
    } finally {
      rmSync(deep, { recursive: true, force: true });
    }
  }
});

test("GPU044 across modules: a parser built in one function and parsed by its caller, and one declared and parsed at module level, reached by an import", async () => {
  const built =
    'import argparse\n\n\ndef build_parser():\n    parser = argparse.ArgumentParser()\n    parser.add_argument("--local_rank", type=int, default=0)\n    return parser\n';
  const caller = (parse: string) =>
    `from trainer.options import build_parser\n\n\ndef run():\n    args = build_parser().${parse}\n    print(args)\n\n\nrun()\n`;
  for (const [parse, want] of [
    ["parse_args()", [5]],
    ["parse_known_args()[0]", []],
  ] as const) {
    const root = gitProject({ ...REACHED, "trainer/options.py": built, "main.py": caller(parse) });
    try {
      const { found } = await lintIn(root, "trainer/options.py");
      assert.deepEqual(
        found.map((d) => d.range.start.line),
        want,
        parse,
      );
      if (found.length) assert.match(found[0].message, /reach this parser \(main\.py:5\)/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  const atImport =
    'import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--local_rank", type=int, default=0)\nARGS = parser.parse_args()\n';
  const root = gitProject({
    ...REACHED,
    "trainer/settings.py": atImport,
    "main.py": "from trainer.settings import ARGS\n\nprint(ARGS.local_rank)\n",
  });
  try {
    const { found } = await lintIn(root, "trainer/settings.py");
    assert.deepEqual(
      found.map((d) => d.range.start.line),
      [3],
    );
    assert.match(found[0].message, /reach this parser \(main\.py:1\)/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
