/**
 * The project's own modules (server/src/engine/python/project.ts): an import of a project module
 * that initialises CUDA when imported, or a call of a project function that does, makes a later
 * startup-variable write GPU001, as the same code in one file does. Module lookup follows Python's
 * path finder (regular packages, modules, relative imports); what cannot be seen is silent.
 */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";
import { initEngine, lintPython, type LintOptions } from "../../../../../server/src/engine/lint";
import { ProjectIndex, reexportsIn, type SourceReader } from "../../../../../server/src/engine/python/project";
import { DEFAULT_EAGER_INIT_MODULES } from "../../../../../server/src/engine/frameworks";
import { projectTree, ROOT, WRITER_PROJECT } from "../../../support/helpers";

before(() => initEngine());

/** A project folder (with a pyproject.toml, so it is the project root) holding `files`. */
const tree = projectTree;

const BASE = { eagerInitModules: DEFAULT_EAGER_INIT_MODULES, torchBelow24: false };

/** Lints `file` of `dir` with a project index (a fresh one unless given); the findings as `line code message`, and the lookup's deps. */
function check(
  dir: string,
  file: string,
  index = new ProjectIndex(),
  text?: string,
  preview = false,
): { found: string[]; deps: string[] } {
  const path = join(dir, file);
  const project = index.lookupFor(path, BASE);
  const source = text ?? (index as unknown as { read: SourceReader }).read(path)!;
  const r = lintPython(source, { project, preview } satisfies LintOptions);
  r.tree?.delete();
  return {
    found: r.diagnostics.map((d) => `${d.range.start.line + 1} ${d.code} ${d.message}`),
    deps: [...project.deps()].map((p) => p.slice(dir.length + 1)).sort(),
  };
}

const SETUP_GPU =
  'import torch\n\n\ndef pick():\n    if torch.cuda.is_available():\n        return torch.device("cuda")\n    return torch.device("cpu")\n';

test("a write after importing a project module that initialises CUDA at import (through another project module) is GPU001, naming each step", () => {
  const dir = tree({
    "app/__init__.py": "",
    "app/setup_gpu.py": SETUP_GPU,
    "app/state.py": "from app import setup_gpu\n\nDEVICE = setup_gpu.pick()\n",
    "main.py": 'import os\nimport app.state\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  });
  const { found, deps } = check(dir, "main.py");
  assert.equal(found.length, 1, found.join("\n"));
  assert.match(
    found[0],
    /^4 GPU001 CUDA_VISIBLE_DEVICES is set after CUDA was initialised by import app\.state \(line 2: it runs torch\.cuda\.is_available\(\) at app\/state\.py:3 → app\/setup_gpu\.py:5\)/,
  );
  assert.deepEqual(deps, ["app/__init__.py", "app/setup_gpu.py", "app/state.py"]);
});

test("without the project index the same file is opaque: no GPU001 (the write follows no framework import either)", () => {
  const dir = tree({
    "app/__init__.py": "",
    "app/setup_gpu.py": SETUP_GPU,
    "app/state.py": "from app import setup_gpu\n\nDEVICE = setup_gpu.pick()\n",
  });
  const r = lintPython('import os\nimport app.state\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n', {});
  r.tree?.delete();
  assert.deepEqual(
    r.diagnostics.map((d) => d.code),
    [],
  );
  assert.ok(existsSync(join(dir, "app", "state.py")));
});

test("a call of a project function that initialises CUDA, imported with `from`, relative or absolute, makes the next write GPU001 (is_available() freezes the device set, not the allocator's settings: ground truth)", () => {
  const dir = tree({
    "app/__init__.py": "",
    "app/setup_gpu.py": SETUP_GPU,
    "app/train.py":
      'import os\n\nfrom .setup_gpu import pick\n\n\ndef run():\n    device = pick()\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n    return device\n\n\nrun()\n',
    "cli.py":
      'import os\nfrom app.setup_gpu import pick as choose\n\nchoose()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
  });
  const rel = check(dir, "app/train.py").found;
  assert.equal(rel.length, 1, rel.join("\n"));
  assert.match(
    rel[0],
    /^8 GPU001 CUDA_VISIBLE_DEVICES is set after CUDA was initialised by pick\(\) \(line 7: it runs torch\.cuda\.is_available\(\) at setup_gpu\.py:5\)/,
  );
  const abs = check(dir, "cli.py").found;
  assert.equal(abs.length, 1, abs.join("\n"));
  assert.match(
    abs[0],
    /^5 GPU001 .* by choose\(\) \(line 4: it runs torch\.cuda\.is_available\(\) at app\/setup_gpu\.py:5\)/,
  );
});

test('what an import does not run stays silent: the module\'s `if __name__ == "__main__":` block, a function only defined, a write before the import', () => {
  const dir = tree({
    "tool.py":
      'import torch\n\n\ndef probe():\n    return torch.cuda.device_count() > 0 and torch.cuda.current_device()\n\n\nif __name__ == "__main__":\n    torch.cuda.init()\n',
    "a.py": 'import os\nimport tool\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    "b.py": 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport tool\n\ntool.probe()\n',
  });
  assert.deepEqual(check(dir, "a.py").found, []);
  assert.deepEqual(check(dir, "b.py").found, []);
});

test("names of frameworks and catalogued libraries are never looked up in the project (a vendored torch/ is not the torch that runs)", () => {
  const dir = tree({
    "torch/__init__.py":
      "import ctypes\nctypes.CDLL('libcuda.so').cuInit(0)\nfrom torch_impl import cuda\ncuda.init()\n",
    "main.py": 'import os\nimport torch\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  });
  // GPU002 (preview: the write works today), not GPU001 from the vendored torch/.
  assert.deepEqual(check(dir, "main.py").found, []);
  assert.deepEqual(
    check(dir, "main.py", undefined, undefined, true)
      .found.map((f) => f.split(" ").slice(0, 2).join(" "))
      .filter((f) => f !== "4 GPU006"),
    ["4 GPU002"],
  );
});

test(
  "an import cycle, a missing module, a FIFO and a link to /dev/zero in the project count as initialising nothing, and nothing blocks",
  { skip: process.platform === "win32" && "no mkfifo" },
  () => {
    const dir = tree({
      "a.py": "import torch\nimport b\n\nX = 1\n",
      "b.py": "import a\nimport torch\ntorch.cuda.init()\n",
      "main.py":
        'import os\nimport a\nimport missing_mod\nimport pipe\nimport zero\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    });
    spawnSync("mkfifo", [join(dir, "pipe.py")]);
    spawnSync("ln", ["-s", "/dev/zero", join(dir, "zero.py")]);
    const t0 = Date.now();
    const found = check(dir, "main.py").found;
    assert.ok(Date.now() - t0 < 5000, "a FIFO or /dev/zero blocked the lookup");
    // a.py imports b.py, whose torch.cuda.init() runs when a is imported: GPU001 through the cycle's first module.
    assert.equal(found.length, 1, found.join("\n"));
    assert.match(found[0], /^7 GPU001 .* by import a \(line 2: it runs torch\.cuda\.init\(\) at a\.py:2 → b\.py:3\)/);
  },
);

test("invalidate: an edit of a module the lookup read changes the answer and the version; a file no summary read changes neither", () => {
  const files = new Map<string, string>();
  const dir = tree({
    "gpu.py": "import torch\n\ntorch.cuda.init()\n",
    "other.py": "X = 1\n",
    "unrelated.py": "Y = 1\n",
  });
  files.set(join(dir, "gpu.py"), "import torch\n\ntorch.cuda.init()\n");
  files.set(join(dir, "other.py"), "X = 1\n");
  const index = new ProjectIndex((f) => files.get(f) ?? null);
  const main = 'import os\nimport gpu\nimport other\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const v0 = index.lookupFor(join(dir, "main.py"), BASE).version;
  assert.equal(check(dir, "main.py", index, main).found.length, 1);
  assert.equal(index.invalidate(join(dir, "unrelated.py")), false);
  assert.equal(index.lookupFor(join(dir, "main.py"), BASE).version, v0);
  files.set(join(dir, "gpu.py"), "import torch\n\nX = 2\n");
  assert.equal(index.invalidate(join(dir, "gpu.py")), true);
  assert.notEqual(index.lookupFor(join(dir, "main.py"), BASE).version, v0);
  assert.deepEqual(check(dir, "main.py", index, main).found, []);
});

test("the CLI follows project imports, and its result cache misses when an imported module changes", () => {
  const cli = join(ROOT, "dist", "cli.js");
  if (!existsSync(cli)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
  const dir = tree({
    "gpu.py": "import torch\n\ntorch.cuda.init()\n",
    "main.py": 'import os\nimport gpu\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  });
  const run = () =>
    spawnSync(process.execPath, [cli, "check", "--statistics", "."], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, GPU_PILOT_CACHE_DIR: join(dir, ".cache"), GPU_PILOT_WORKERS: "1" },
    });
  const first = run();
  assert.equal(first.status, 1, first.stderr);
  assert.match(
    first.stdout,
    /main\.py:4:1: error GPU001 .*import gpu \(line 2: it runs torch\.cuda\.init\(\) at gpu\.py:3\)/,
  );
  const second = run();
  assert.equal(second.stdout, first.stdout);
  assert.match(second.stderr, /2 of 2 files from the cache/);
  assert.doesNotMatch(second.stderr, /malformed|not signed/);
  writeFileSync(join(dir, "gpu.py"), "import torch\n\nX = torch.zeros(1)\n");
  const third = run();
  assert.equal(third.status, 0, third.stdout + third.stderr);
  assert.match(third.stderr, /0 of 2 files from the cache/);
});

test("a call of a project function that writes a startup variable first, after CUDA initialised, is GPU001 at the call, naming the write", () => {
  const dir = tree({
    "app/__init__.py": "",
    "app/train.py":
      'import os\nimport torch\n\n\ndef fit(cfg):\n    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n    return torch.zeros(1).cuda()\n\n\ndef late(cfg):\n    torch.zeros(1).cuda()\n    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n\n\ndef quiet():\n    os.putenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")\n',
    "main.py":
      "import torch\nfrom app.train import fit, late, quiet\n\n\ndef main():\n    torch.zeros(1).cuda()\n    fit({})\n    late({})\n    quiet()\n\n\nfit({})\n",
    "clean.py": "import torch\nfrom app.train import fit\n\nfit({})\ntorch.zeros(1).cuda()\n",
  });
  const { found, deps } = check(dir, "main.py");
  // fit() writes before it initialises: late at line 7 (main's own allocation above it). late()
  // initialises first (its own file's GPU001 reports that write), quiet() uses os.putenv. The
  // module-level fit({}) at line 12 runs before anything initialised.
  assert.deepEqual(
    found.map((f) => f.slice(0, f.indexOf(" ", f.indexOf(" ") + 1))),
    ["7 GPU001"],
  );
  assert.match(
    found[0],
    /^7 GPU001 fit\(\) sets PYTORCH_CUDA_ALLOC_CONF \(app\/train\.py:6\) after CUDA was initialised by \.cuda\(\) \(line 6\) whenever `main\(\)` runs: the write has no effect in this process/,
  );
  assert.ok(deps.includes("app/train.py"));
  assert.deepEqual(check(dir, "clean.py").found, []);
});

test("the prefilter lets GPU001 run on a file with no environment write when it names a project function that writes one", () => {
  const dir = tree({
    ...WRITER_PROJECT,
    "other.py": "import torch\n\nprint(torch.cuda.is_available())\n",
  });
  const index = new ProjectIndex();
  const path = join(dir, "run.py");
  const project = index.lookupFor(path, BASE);
  assert.deepEqual([...(project.writerNames?.() ?? [])], ["pin_gpu"]);
  const r = lintPython(readFileSync(path, "utf8"), { project });
  r.tree?.delete();
  assert.deepEqual(
    r.diagnostics.map((d) => [d.range.start.line + 1, d.code, d.severity]),
    [[5, "GPU001", "error"]],
  );
  // A file that names no such function is still skipped without a parse.
  const other = lintPython(readFileSync(join(dir, "other.py"), "utf8"), {
    project: index.lookupFor(join(dir, "other.py"), BASE),
  });
  assert.equal(other.parsed, false);
});

test("the writers' scan in shares: modulesUnder lists the project's modules, scanWriters scans a share, seedWriterNames stands for the whole scan", () => {
  const dir = tree({
    ...WRITER_PROJECT,
    "tools/log.py": "def note(x):\n    print(x)\n",
    ".venv/lib/site.py": 'import os\n\n\ndef hidden():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  });
  const index = new ProjectIndex();
  const root = index.rootOf(join(dir, "run.py"));
  assert.equal(root, dir);
  const modules = index.modulesUnder(root).map((f) =>
    f
      .slice(dir.length + 1)
      .split(sep)
      .join("/"),
  );
  assert.deepEqual(modules.sort(), ["run.py", "tools/__init__.py", "tools/env.py", "tools/log.py"]);
  const env = join(dir, "tools", "env.py");
  assert.deepEqual(
    [...index.scanWriters([env], () => BASE)].map(([f, w]) => [f, [...w]]),
    [[env, [["pin_gpu", { variable: "CUDA_VISIBLE_DEVICES", line: 5 }]]]],
  );
  const none = index.scanWriters([join(dir, "tools", "log.py"), join(dir, "run.py")], () => BASE);
  assert.deepEqual(
    [...none.values()].map((w) => w.size),
    [0, 0],
  );
  // Seeded names are the answer: a fresh index lists nothing and reads nothing for this root.
  const seeded = new ProjectIndex();
  seeded.seedWriterNames(root, ["pin_gpu", "made_up"]);
  assert.deepEqual([...(seeded.lookupFor(join(dir, "run.py"), BASE).writerNames?.() ?? [])], ["pin_gpu", "made_up"]);
  const r = lintPython(readFileSync(join(dir, "run.py"), "utf8"), {
    project: seeded.lookupFor(join(dir, "run.py"), BASE),
  });
  r.tree?.delete();
  assert.deepEqual(
    r.diagnostics.map((d) => [d.range.start.line + 1, d.code]),
    [[5, "GPU001"]],
  );
});

test("invalidate and the writers' scan: editing the training script or a module without writers keeps the version; editing a writer's module, or one a caller asked about that now writes, changes it", () => {
  const dir = tree({
    "tools/__init__.py": "",
    "tools/env.py": 'import os\n\n\ndef pin_gpu():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    "tools/log.py": "def note(x):\n    print(x)\n",
    "train.py":
      'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nimport torch\nfrom tools.env import pin_gpu\nfrom tools.log import note\n\ntorch.zeros(1).cuda()\npin_gpu()\nnote(1)\n',
  });
  const files = new Map<string, string>();
  for (const f of ["tools/__init__.py", "tools/env.py", "tools/log.py", "train.py"])
    files.set(join(dir, f), readFileSync(join(dir, f), "utf8"));
  const index = new ProjectIndex((f) => files.get(f) ?? null);
  const train = join(dir, "train.py");
  const found = () =>
    check(dir, "train.py", index, files.get(train)).found.map((f) => f.split(" ").slice(0, 3).join(" "));
  assert.deepEqual(found(), ["8 GPU001 pin_gpu()"]);
  const version = () => index.lookupFor(train, BASE).version;
  const v0 = version();
  // The training script itself names a startup variable, but no lookup asked about it: no parse, same version.
  assert.equal(index.invalidate(train), false);
  assert.equal(version(), v0);
  // tools/log.py was asked about (note() is called after the init) and still writes nothing.
  files.set(join(dir, "tools/log.py"), "def note(x):\n    print('note', x)\n");
  assert.equal(index.invalidate(join(dir, "tools/log.py")), false);
  assert.equal(version(), v0);
  // ... until it writes a startup variable first: the version changes and train.py's finding follows.
  files.set(
    join(dir, "tools/log.py"),
    'import os\n\n\ndef note(x):\n    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n',
  );
  assert.equal(index.invalidate(join(dir, "tools/log.py")), true);
  assert.notEqual(version(), v0);
  assert.deepEqual(found(), ["8 GPU001 pin_gpu()", "9 GPU001 note()"]);
  // A writer's module edited so that its function no longer writes: the finding goes.
  files.set(join(dir, "tools/env.py"), "def pin_gpu():\n    return 1\n");
  assert.equal(index.invalidate(join(dir, "tools/env.py")), true);
  assert.deepEqual(found(), ["9 GPU001 note()"]);
});

test("reexportsIn: the names a module's top level imports under their own name, less its own definitions; an import inside a function or class binds nothing at module level", () => {
  const text = [
    "from .prepare import prepare_moe",
    "from .loader import load as load",
    "from . import helpers",
    "import numpy as np",
    "from .util import shadowed",
    "try:",
    "    from .fast import kernel",
    "except ImportError:",
    "    kernel = None",
    "",
    "@decorate(",
    "    1,",
    ")",
    "def shadowed():",
    "    from .inner import only_here",
    "",
    "async def run():",
    "    from .other import prepare_moe",
    "",
    "class Model:",
    "    from .attrs import Field",
    "",
  ].join("\n");
  assert.deepEqual([...reexportsIn(text, BASE)].sort(), [
    ["helpers", ".helpers"],
    ["kernel", ".fast.kernel"],
    ["load", ".loader.load"],
    ["prepare_moe", ".prepare.prepare_moe"],
  ]);
  // A definition whose name is not read after its keyword: that statement is parsed for it.
  const odd = "from .a import f\ndef \\\n  g():\n    from .b import h\n";
  assert.deepEqual([...reexportsIn(odd, BASE)], [["f", ".a.f"]]);
  assert.deepEqual([...reexportsIn("def f():\n    from .b import g\n", BASE)], []);
});

test("a lint that finds its writers by the calls it sees runs no project-wide writers' scan (the editor's case): the same GPU001, and the scan's counters stay at 0 until writerNames is asked", () => {
  const dir = tree({
    "app/__init__.py": "",
    "app/train.py":
      'import os\nimport torch\n\n\ndef fit(cfg):\n    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n    return torch.zeros(1).cuda()\n',
    "app/other.py": 'import os\n\n\ndef pin():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    "main.py":
      'import os\nimport torch\nfrom app.train import fit\n\ntorch.zeros(1).cuda()\nfit({})\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  });
  const expected = ["6 GPU001", "7 GPU001"];
  const fresh = new ProjectIndex();
  assert.deepEqual(
    check(dir, "main.py", fresh).found.map((f) => f.split(" ").slice(0, 2).join(" ")),
    expected,
  );
  // Only app/train.py, which main.py calls into, was read for its writers.
  assert.deepEqual(fresh.scanCounts, { kept: 0, read: 1 });
  // With the names kept (the CLI asks for them first), the same findings.
  const kept = new ProjectIndex();
  assert.deepEqual([...(kept.lookupFor(join(dir, "main.py"), BASE).writerNames?.() ?? [])].sort(), ["fit", "pin"]);
  assert.deepEqual(
    check(dir, "main.py", kept).found.map((f) => f.split(" ").slice(0, 2).join(" ")),
    expected,
  );
});

test("a project module whose text names no rank is not parsed for returned ranks; once it names one (after invalidate) its returned tuple is read, and the version changes", () => {
  const files = new Map<string, string>();
  const dir = tree({ "envs.py": "", "main.py": "" });
  const envs = join(dir, "envs.py");
  files.set(envs, "def get_envs():\n    return 0, 1, 2\n");
  const index = new ProjectIndex((f) => files.get(f) ?? null);
  const lookup = () => index.lookupFor(join(dir, "main.py"), BASE);
  const v0 = lookup().version;
  assert.equal(lookup().callableReturns?.("envs.get_envs"), null);
  files.set(
    envs,
    'import os\n\n\ndef get_envs():\n    return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"]), 2\n',
  );
  assert.equal(index.invalidate(envs), true);
  assert.notEqual(lookup().version, v0);
  assert.deepEqual(
    lookup()
      .callableReturns?.("envs.get_envs")
      ?.map((r) => [r.kind, r.variable]),
    [
      ["local", "LOCAL_RANK"],
      ["global", "RANK"],
      ["unknown", null],
    ],
  );
});

test("clear forgets every answer read from a file: a module deleted and created again with a returned rank and a re-export answers from its new text", () => {
  const files = new Map<string, string>();
  const dir = tree({ "envs.py": "", "main.py": "", "pkg/__init__.py": "", "pkg/ranks.py": "" });
  const envs = join(dir, "envs.py");
  const init = join(dir, "pkg", "__init__.py");
  files.set(envs, "def get_envs():\n    return 0, 1, 2\n");
  files.set(init, "");
  files.set(
    join(dir, "pkg", "ranks.py"),
    'import os\n\n\ndef world():\n    return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"])\n',
  );
  const index = new ProjectIndex((f) => files.get(f) ?? null);
  const lookup = () => index.lookupFor(join(dir, "main.py"), BASE);
  assert.equal(lookup().callableReturns?.("envs.get_envs"), null);
  assert.equal(lookup().callableReturns?.("pkg.world"), null);
  // Both files are deleted and created again (a branch switch): the server's watcher calls clear().
  files.set(
    envs,
    'import os\n\n\ndef get_envs():\n    return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"]), 2\n',
  );
  files.set(init, "from .ranks import world\n");
  index.clear();
  const kinds = (name: string) =>
    lookup()
      .callableReturns?.(name)
      ?.map((r) => r.kind);
  assert.deepEqual(kinds("envs.get_envs"), ["local", "global", "unknown"]);
  assert.deepEqual(kinds("pkg.world"), ["local", "global"]);
});
