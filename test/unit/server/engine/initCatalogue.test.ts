/**
 * The init catalogue (server/src/engine/initCatalogue.json): its schema, the version filtering by
 * the project's pins, what GPU001 and GPU002 say with it, and the scanner that proposes entries
 * (scripts/initScan.ts).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT, lintCode } from "../../support/helpers";
import {
  INIT_CATALOGUE,
  CatalogueError,
  applicableEntries,
  eagerModulesOf,
  importInitNote,
  isCatalogued,
  intervalOf,
  throughNote,
  throughPending,
  loadCatalogue,
  rangesOverlap,
  validateEntry,
  whollyAfter,
  type CatalogueEntry,
} from "../../../../server/src/engine/initCatalogue";
import {
  DEFAULT_EAGER_INIT_MODULES,
  EAGER_INIT_DEPTH,
  EAGER_INIT_FRAMEWORK,
} from "../../../../server/src/engine/frameworks";
import { libraryPins } from "../../../../server/src/engine/requirements";
import { catalogueEagerFor } from "../../../../server/src/engine/options";
import { scanInitAtImport, proposedEntries } from "../../../../scripts/initScan";
import { ProjectIndex } from "../../../../server/src/engine/python/project";
import { lintPython } from "../../../../server/src/engine/lint";
import { projectTree } from "../../support/helpers";

const good: CatalogueEntry = {
  library: "kornia",
  package: "kornia",
  versions: ">=0.7,<0.8",
  initialises: "import",
  depth: "driver",
  provenance: {
    kind: "read",
    repo: "kornia/kornia",
    commit: "b4f5a78a13891c7ac4c1cd9695941380273e981d",
    path: "kornia/x.py",
    line: 12,
    quote: "torch.cuda.is_available()",
  },
};

test("every catalogue entry validates; the file parses into entries with provenance", () => {
  const doc = JSON.parse(readFileSync(join(ROOT, "server/src/engine/initCatalogue.json"), "utf8"));
  assert.equal(loadCatalogue(doc).length, doc.entries.length);
  assert.ok(INIT_CATALOGUE.length >= 20);
  for (const e of INIT_CATALOGUE) assert.ok(["read", "measured", "reported"].includes(e.provenance.kind), e.library);
  // A reported entry is kept only for the contract's defaults and reports not yet measured (old
  // versions that cannot reach the GPU machine: torch 1.12.0, torchvision 0.18 with torch 2.3, paddle
  // before 2.1, whose import's depth a maintainer's fix describes).
  assert.deepEqual(
    INIT_CATALOGUE.filter((e) => e.provenance.kind === "reported")
      .map((e) => e.library)
      .sort(),
    ["flash_attn", "kornia", "monai", "paddle", "torch", "torchvision"],
  );
});

test("a bad range, a missing provenance, a short commit, a depthless initialising entry each fail validation", () => {
  assert.equal(validateEntry(good, 0), good);
  const bad = (patch: Record<string, unknown>, why: RegExp) =>
    assert.throws(
      () => validateEntry({ ...good, ...patch }, 3),
      (e: unknown) => e instanceof CatalogueError && why.test((e as Error).message),
    );
  bad({ versions: ">=0.7,<<0.8" }, /entry 3 \(kornia\): versions: cannot read the version clause/);
  bad({ versions: "latest" }, /versions/);
  bad({ provenance: undefined }, /provenance is missing/);
  bad({ provenance: { ...good.provenance, commit: "b4f5a78" } }, /commit must be 40 hex/);
  bad({ provenance: { ...good.provenance, line: 0 } }, /line must be a line number/);
  bad(
    {
      provenance: {
        kind: "measured",
        row: "verify/results-frameworks-h200.json#import-freeze|import kornia",
        library_version: "0.7.0",
        torch: "2.11",
      },
    },
    /provenance.driver/,
  );
  bad({ depth: undefined }, /depth must be one of/);
  bad({ initialises: [], depth: "nvml" }, /depth is only for an entry that initialises/);
  bad({ initialises: ["torch.cuda.init"] }, /dotted callables under the library/);
});

test("version intervals: PEP 440 clauses, wildcards, ~=, and overlap", () => {
  assert.deepEqual(intervalOf("==0.7.*"), { lo: { v: [0, 7], inclusive: true }, hi: { v: [0, 8], inclusive: false } });
  assert.deepEqual(intervalOf("~=1.4.2"), {
    lo: { v: [1, 4, 2], inclusive: true },
    hi: { v: [1, 5], inclusive: false },
  });
  assert.equal(rangesOverlap(">=0.7,<0.8", "==0.7.3"), true);
  assert.equal(rangesOverlap(">=0.7,<0.8", "==0.8.0"), false);
  assert.equal(rangesOverlap(">=0.7,<0.8", "<=0.7"), true);
  assert.equal(rangesOverlap(">=0.14.1", "==0.14.0"), false);
  assert.equal(rangesOverlap("==2.8.0.post1", ">=2.6,<3"), true);
  assert.equal(rangesOverlap("*", "==1.0"), true);
  assert.equal(whollyAfter(">=0.0.23", ">=0.0.20,<0.0.23"), true);
  assert.equal(whollyAfter(">=2.6.0", "==2.8.0.post1"), false);
});

test("unpinned: the default eager list is the catalogue's current initialising entries, with their depths", () => {
  // The contract's defaults (spec/rules.md: flash_attn, deepspeed, kornia, monai, transformer_engine) stay eager
  // through their entries, except kornia: read and measured (0.9.0rc1) as initialising nothing from 0.6.12 on;
  // bitsandbytes, catalyst, paddle, python_vali, torch_geometric, unsloth and mmengine's modules that import
  // mmengine.device (read: its import runs torch.cuda.is_available()) join.
  assert.deepEqual([...DEFAULT_EAGER_INIT_MODULES].sort(), [
    "bitsandbytes",
    "catalyst",
    "deepspeed",
    "flash_attn",
    "mmengine._strategy",
    "mmengine.dataset",
    "mmengine.device",
    "mmengine.dist",
    "mmengine.evaluator",
    "mmengine.hooks",
    "mmengine.hub",
    "mmengine.infer",
    "mmengine.model",
    "mmengine.optim",
    "mmengine.runner",
    "mmengine.structures",
    "mmengine.testing",
    "mmengine.utils.dl_utils",
    "mmengine.visualization",
    "monai",
    "paddle",
    "pycuda.autoinit",
    "python_vali",
    "torch_geometric",
    "transformer_engine",
    "unsloth",
  ]);
  assert.equal(EAGER_INIT_DEPTH.get("unsloth"), "context", "get_device_capability() at import runs the lazy init");
  assert.equal(EAGER_INIT_DEPTH.get("torch_geometric"), "nvml", "the measured entry (nvml) comes first");
  assert.equal(EAGER_INIT_DEPTH.get("bitsandbytes"), "context", "measured: is_initialized() after the import");
  assert.equal(
    EAGER_INIT_DEPTH.get("python_vali"),
    "driver",
    "read: cuInit and cuDeviceGetCount at the native module's load",
  );
  // xformers initialised at import only in 0.0.20-0.0.22: an unpinned install gets a newer one.
  assert.ok(!DEFAULT_EAGER_INIT_MODULES.includes("xformers"));
  assert.ok(!DEFAULT_EAGER_INIT_MODULES.includes("apex"));
  assert.equal(EAGER_INIT_DEPTH.get("monai"), "context", "a reported entry keeps the old default depth");
  assert.ok(
    !DEFAULT_EAGER_INIT_MODULES.includes("kornia"),
    "kornia >= 0.6.12 initialises nothing (read; measured 0.9.0rc1)",
  );
});

test("pins: an entry whose versions exclude the pin is skipped; a pin inside the range keeps it", () => {
  assert.ok(eagerModulesOf(applicableEntries({ xformers: "==0.0.20" })).includes("xformers"));
  assert.ok(!eagerModulesOf(applicableEntries({ xformers: "==0.0.28" })).includes("xformers"));
  assert.ok(!eagerModulesOf(applicableEntries({ deepspeed: "==0.14.0" })).includes("deepspeed"));
  assert.ok(eagerModulesOf(applicableEntries({ deepspeed: ">=0.15" })).includes("deepspeed"));
  assert.ok(eagerModulesOf(applicableEntries({ "torch-geometric": "==2.8.0" })).includes("torch_geometric"));
  assert.deepEqual(
    libraryPins(["deepspeed==0.14.0  # old", "torch_geometric>=2.6,<2.9", "numpy", "xformers (==0.0.20)"]),
    { deepspeed: "==0.14.0", "torch-geometric": ">=2.6,<2.9", xformers: "==0.0.20" },
  );
  const dir = mkdtempSync(join(tmpdir(), "gp-pins-"));
  try {
    assert.equal(catalogueEagerFor([dir]), undefined, "no dependency file: the default list");
    writeFileSync(join(dir, "requirements.txt"), "deepspeed==0.13.5\nxformers==0.0.21\n");
    const eager = catalogueEagerFor([dir])!;
    assert.ok(
      !eager.includes("deepspeed") && eager.includes("xformers") && eager.includes("bitsandbytes"),
      eager.join(","),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("GPU001 after a catalogued import names the library, its version range and where it was read", async () => {
  const src = 'import os\nimport deepspeed\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n';
  const [d] = await lintCode(src, "GPU001");
  assert.equal(d.range.start.line, 3);
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set after CUDA was initialised by import deepspeed (line 2: deepspeed >=0.14.1 initialises CUDA when imported (read in microsoft/DeepSpeed accelerator/real_accelerator.py:186)): it has no effect in this process (the program stays on the GPUs it already saw)",
  );
  assert.equal(
    importInitNote("torch_geometric"),
    "torch_geometric ==2.8.0.post1 initialises CUDA when imported (measured with torch_geometric 2.8.0.post1, torch 2.11.0+cu130)",
  );
  // nvml depth: the allocator variables still apply after `import deepspeed` (frameworks.ts freezes()).
  assert.deepEqual(
    await lintCode(
      'import os\nimport deepspeed\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n',
      "GPU001",
    ),
    [],
  );
  // A catalogued library read as not initialising is no GPU001 (apex: read, nothing at import).
  assert.deepEqual(await lintCode('import os\nimport apex\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', "GPU001"), []);
  // A reported entry (kornia before 0.6.12: a user's report on 0.6.8) says so, and that it is not measured;
  // unpinned, the newest kornia applies, read and measured (0.9.0rc1) as initialising nothing: GPU002, not GPU001.
  const [k] = await lintCode('import os\nimport kornia\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', "GPU001", {
    eagerInitModules: eagerModulesOf(applicableEntries({ kornia: "==0.6.8" })),
  });
  assert.match(k.message, /^CUDA_VISIBLE_DEVICES is set after CUDA was initialised by import kornia \(line 2/);
  const reported = applicableEntries({ kornia: "==0.6.8" }).find((e) => e.library === "kornia")!;
  assert.deepEqual([reported.versions, reported.provenance.kind], ["<0.6.12", "reported"]);
  assert.ok(eagerModulesOf(applicableEntries({ kornia: "==0.6.8" })).includes("kornia"));
  assert.ok(!eagerModulesOf(applicableEntries({ kornia: "==0.7.0" })).includes("kornia"));
  assert.deepEqual(
    await lintCode('import os\nimport kornia\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n', "GPU001"),
    [],
  );
  // bitsandbytes: measured at the commit read (torch.cuda.is_initialized() after the import): context.
  assert.equal(EAGER_INIT_DEPTH.get("bitsandbytes"), "context");
});

test("GPU001: accelerate.Accelerator() is a catalogued init callable", async () => {
  const [d] = await lintCode(
    'import os\nfrom accelerate import Accelerator\nacc = Accelerator()\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n',
    "GPU001",
  );
  assert.match(d.message, /initialised by accelerate\.Accelerator\(\) \(line 3\)/);
});

test("GPU002 names an uncatalogued library imported between the framework import and the write; otherwise says the write works today", async () => {
  const between =
    'import os\nimport torch\nimport numpy as np\nimport my_cuda_ext\nimport apex\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  // my_cuda_ext brings no known framework: the finding is a preview check; vllm does, and is default.
  assert.deepEqual(await lintCode(between, "GPU002"), []);
  const [d] = await lintCode(between, "GPU002", { preview: true });
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set after `import torch` (line 2): it works only if `my_cuda_ext` (imported on line 4) does not initialise CUDA; it is not in GPU Pilot's catalogue of libraries that do (listed in this rule's documentation); set it before the import",
  );
  const [plain] = await lintCode(
    'import os\nimport torch\nimport numpy\nimport apex\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    "GPU002",
    { preview: true },
  );
  assert.equal(
    plain.message,
    "CUDA_VISIBLE_DEVICES is set after `import torch` (line 2): it works today (importing torch leaves CUDA uninitialised, measured), but only while nothing initialises CUDA before the write; set it before the import",
  );
  // An import in a try block runs too; one in a function does not.
  const [tried] = await lintCode(
    'import os\nimport torch\ntry:\n    import my_cuda_ext\nexcept ImportError:\n    pass\ndef f():\n    import other_ext\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    "GPU002",
    { preview: true },
  );
  assert.match(tried.message, /`my_cuda_ext` \(imported on line 4\)/);
  // An import after the write is not between.
  const [after] = await lintCode(
    'import os\nimport torch\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport my_cuda_ext\n',
    "GPU002",
    { preview: true },
  );
  assert.match(after.message, /it works today/);
});

test("ultralytics (read: no CUDA call at import, 8.0.0 to 8.4.114) is catalogued: GPU002 no longer names it as a GPU library that may initialise, pinned or not", async () => {
  assert.ok(isCatalogued("ultralytics"));
  assert.ok(isCatalogued("ultralytics", { ultralytics: "==8.3.100" }));
  assert.ok(!isCatalogued("ultralytics", { ultralytics: "==7.0.0" }), "before 8.0.0: not read");
  const code = 'import os\nimport torch\nfrom ultralytics import YOLO\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.deepEqual(await lintCode(code, "GPU002"), [], "no default finding: nothing unknown in between");
  const [d] = await lintCode(code, "GPU002", { preview: true });
  assert.match(d.message, /it works today/);
});

/** Writes `files` (path → text) under a fresh folder; returns it. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-scan-"));
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
  return dir;
}

test("scanner: a package whose __init__ imports a submodule that queries the device at module level is found, with its path, line and chain", async () => {
  const dir = tree({
    "site/gpulib/__init__.py": "from .core import run\nfrom . import helpers\n",
    "site/gpulib/core.py": "import torch\n\ndef run():\n    return torch.cuda.is_available()\n",
    "site/gpulib/helpers.py": "import torch\nfrom gpulib.caps import CAP\n",
    "site/gpulib/caps.py":
      "import torch\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gpulib import never\nCAP = torch.cuda.get_device_capability()\n",
    "site/gpulib/never.py": "import torch\nx = torch.ones(1, device='cuda')\n",
    "site/gpulib/lazy.py": "import torch\nx = torch.ones(1, device='cuda')\n",
  });
  try {
    const r = await scanInitAtImport(dir);
    assert.deepEqual(r.packages, [{ name: "gpulib", root: "site/gpulib" }]);
    assert.equal(
      r.reached.gpulib,
      4,
      "__init__, core, helpers, caps: not the TYPE_CHECKING import, not the unimported module",
    );
    assert.deepEqual(
      r.findings.map((f) => [f.file, f.line, f.what, f.depth, f.chain.join(" > ")]),
      [
        [
          "site/gpulib/caps.py",
          5,
          "torch.cuda.get_device_capability()",
          "driver",
          "gpulib > gpulib.helpers > gpulib.caps",
        ],
      ],
    );
    assert.deepEqual(proposedEntries(r), [
      {
        library: "gpulib",
        package: "<PyPI name>",
        versions: "<range: check the tags>",
        initialises: "import",
        depth: "driver",
        provenance: {
          kind: "read",
          repo: "<owner/name>",
          commit: "<40 hex>",
          path: "site/gpulib/caps.py",
          line: 5,
          quote: "CAP = torch.cuda.get_device_capability()",
        },
      },
    ]);
    const all = await scanInitAtImport(dir, undefined, true);
    assert.deepEqual(all.findings.map((f) => f.file).sort(), [
      "site/gpulib/caps.py",
      "site/gpulib/lazy.py",
      "site/gpulib/never.py",
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("scanner: a package that only defines functions has no finding", async () => {
  const dir = tree({
    "pkg/__init__.py": "import torch\nfrom .ops import f\n",
    "pkg/ops.py":
      "import torch\n\ndef f():\n    torch.cuda.init()\n    return torch.zeros(1, device='cuda')\n\nclass K:\n    def m(self):\n        return torch.cuda.current_device()\n",
  });
  try {
    const r = await scanInitAtImport(join(dir, "pkg"));
    assert.equal(r.reached.pkg, 2);
    assert.deepEqual(r.findings, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every measured entry names a real row of verify/, and agrees with it (frozen iff the entry says import initialises)", () => {
  for (const e of INIT_CATALOGUE) {
    if (e.provenance.kind !== "measured") continue;
    const [file, id] = e.provenance.row.split("#");
    const res = JSON.parse(readFileSync(join(ROOT, file), "utf8")) as {
      environment: Record<string, string>;
      cases: Array<{ group: string; case: string; frozen?: boolean; version?: string }>;
    };
    const row = res.cases.find((c) => `${c.group}|${c.case}` === id);
    assert.ok(row, `${e.library}: no row ${id} in ${file}`);
    // An entry that initialises (at import, or through the callables it names) froze the variable; one that names nothing did not.
    const initialises = e.initialises === "import" || e.initialises.length > 0;
    assert.equal(row.frozen, initialises, `${e.library}: measured ${row.frozen ? "freezing" : "lazy"}`);
    // The torch-freeze rows measure torch itself: its version is the run's environment's.
    assert.equal(
      row.version ?? (e.library === "torch" ? res.environment.torch : undefined),
      e.provenance.library_version,
      e.library,
    );
    assert.equal(res.environment.torch, e.provenance.torch, e.library);
    const driver = e.provenance.driver;
    assert.ok(
      (res.environment.nvidia_smi as unknown as string[]).some((l) => l.endsWith(driver)),
      e.library,
    );
  }
});

test("torch ==1.12.0 (reported: its import ran torch.cuda.is_available()) applies only to a project that pins it; unpinned and 2.x projects keep `import torch` lazy", () => {
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  assert.ok(eager({ torch: "==1.12.0" }).includes("torch"));
  assert.ok(!eager({}).includes("torch"));
  assert.ok(!eager({ torch: "==2.1.0" }).includes("torch"));
  assert.ok(!eager({ torch: ">=2.0" }).includes("torch"));
  assert.ok(!DEFAULT_EAGER_INIT_MODULES.includes("torch"));
  assert.ok(eager({ torch: ">=1.11,<1.13" }).includes("torch"), "a range that holds 1.12.0");
});

test("torchvision 0.18 (reported: its import ran a device_count() that torch 2.3 cached) initialises only where the project pins 0.18; the measured 0.26 entry keeps unpinned projects lazy", async () => {
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  assert.ok(eager({ torchvision: "==0.18.0" }).includes("torchvision"));
  assert.ok(eager({ torchvision: "==0.18.1" }).includes("torchvision"));
  assert.ok(!eager({}).includes("torchvision"));
  assert.ok(!eager({ torchvision: "==0.17.2" }).includes("torchvision"));
  assert.ok(!eager({ torchvision: ">=0.19" }).includes("torchvision"));
  const entry = applicableEntries({ torchvision: "==0.18.0" }).find((e) => e.library === "torchvision")!;
  assert.deepEqual([entry.versions, entry.depth, entry.provenance.kind], [">=0.18.0,<0.19", "driver", "reported"]);
  const code = 'import os\nimport torch\nimport torchvision\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n';
  const [f] = await lintCode(code, "GPU001", { eagerInitModules: eager({ torchvision: "==0.18.0" }) });
  assert.equal(f.range.start.line, 3);
  assert.match(
    f.message,
    /initialised by import torchvision \(line 3: torchvision >=0\.18\.0,<0\.19 initialises CUDA when imported \(reported in https:\/\/github\.com\/pytorch\/pytorch\/issues\/122085; not measured yet\)\)/,
  );
  assert.deepEqual(await lintCode(code, "GPU001"), [], "unpinned: torchvision 0.26 was measured not to initialise");
});

test("accelerate 0.21 (read: is_tpu_available() at module level ran torch.cuda.is_available(), optimum-benchmark#27) initialises at import only where the project pins 0.21; 0.20 and 0.22 on are not settled by it, and unpinned projects get the measured 1.15", async () => {
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  for (const pin of ["==0.21.0", ">=0.21,<0.22"]) assert.ok(eager({ accelerate: pin }).includes("accelerate"), pin);
  for (const pin of ["==0.20.3", "==0.22.0", "==0.27.2", "==1.15.0"])
    assert.ok(!eager({ accelerate: pin }).includes("accelerate"), pin);
  assert.ok(!eager({}).includes("accelerate"), "unpinned: the >=0.21.0,<0.22.0 entry gives way to the newer ones");
  assert.ok(!DEFAULT_EAGER_INIT_MODULES.includes("accelerate"));
  assert.ok(!isCatalogued("accelerate", { accelerate: "==0.25.0" }), "0.22 to 0.32: no entry, GPU002 names it");
  const entry = applicableEntries({ accelerate: "==0.21.0" }).find(
    (e) => e.library === "accelerate" && e.initialises === "import",
  )!;
  assert.deepEqual([entry.versions, entry.depth, entry.provenance.kind], [">=0.21.0,<0.22.0", "nvml", "read"]);
  const pins = { accelerate: "==0.21.0" };
  const options = { eagerInitModules: eager(pins), libraryPins: pins };
  const write = (name: string, value: string) =>
    `import os\nimport torch\nfrom accelerate import Accelerator\nos.environ["${name}"] = "${value}"\n`;
  const [f, ...more] = await lintCode(write("CUDA_VISIBLE_DEVICES", "4,5"), "GPU001", options);
  assert.equal(more.length, 0);
  assert.equal(f.range.start.line, 3);
  assert.match(
    f.message,
    /initialised by from accelerate import Accelerator \(line 3: accelerate >=0\.21\.0,<0\.22\.0 initialises CUDA when imported \(read in huggingface\/accelerate src\/accelerate\/utils\/imports\.py:84\)\)/,
  );
  assert.deepEqual(
    await lintCode(write("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"), "GPU001", options),
    [],
    "is_available() (nvml): torch's allocator variables still apply",
  );
  assert.deepEqual(
    await lintCode(write("CUDA_VISIBLE_DEVICES", "4,5"), "GPU001"),
    [],
    "unpinned: accelerate 1.15 measured lazy",
  );
});

test("augmax < 0.3.3 (read: jax.numpy arrays as a class attribute and default values) starts JAX's backend at import: XLA_* and CUDA_* writes after it are GPU001, torch's allocator variable is not", async () => {
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  assert.equal(EAGER_INIT_FRAMEWORK.get("augmax"), "jax");
  assert.equal(EAGER_INIT_FRAMEWORK.get("deepspeed"), "torch", "an entry with no framework is torch's");
  assert.ok(eager({ augmax: "==0.3.2" }).includes("augmax"));
  assert.ok(!eager({}).includes("augmax"), "unpinned: 0.3.3 and later (read: nothing at import)");
  assert.ok(!eager({ augmax: ">=0.4" }).includes("augmax"));
  const options = { eagerInitModules: eager({ augmax: "==0.3.2" }) };
  const write = (v: string) => `import os\nimport jax\nimport augmax\nos.environ["${v}"] = "false"\n`;
  const [d] = await lintCode(write("XLA_PYTHON_CLIENT_PREALLOCATE"), "GPU001", options);
  assert.equal(d.range.start.line, 3);
  assert.match(
    d.message,
    /by import augmax \(line 3: augmax <0\.3\.3 initialises CUDA when imported \(read in khdlr\/augmax augmax\/geometric\.py:29\)\)/,
  );
  assert.equal((await lintCode(write("CUDA_VISIBLE_DEVICES"), "GPU001", options)).length, 1);
  assert.deepEqual(await lintCode(write("PYTORCH_CUDA_ALLOC_CONF"), "GPU001", options), []);
  assert.deepEqual(await lintCode(write("XLA_PYTHON_CLIENT_PREALLOCATE"), "GPU001"), []);
});

test("paddle (read: `import paddle` runs core.init_devices(), which counts the GPUs with cudaGetDeviceCount) starts the CUDA driver for Paddle: CUDA_* writes after it are GPU001, torch's allocator variables are not", async () => {
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  assert.equal(EAGER_INIT_FRAMEWORK.get("paddle"), "paddle");
  assert.equal(EAGER_INIT_DEPTH.get("paddle"), "driver", "the device count, no context: device contexts are deferred");
  assert.ok(eager({}).includes("paddle"));
  assert.ok(eager({ "paddlepaddle-gpu": "==2.6.2" }).includes("paddle"));
  const old = applicableEntries({ "paddlepaddle-gpu": "==1.8.5" }).filter((e) => e.library === "paddle");
  assert.deepEqual(
    old.map((e) => [e.versions, e.depth, e.provenance.kind]),
    [["<2.1", "context", "reported"]],
    "before the lazy P2P fix the import also made contexts",
  );
  const write = (v: string, lib = "import paddle") => `import os\n${lib}\nos.environ["${v}"] = "1"\n`;
  const [d] = await lintCode(write("CUDA_VISIBLE_DEVICES"), "GPU001");
  assert.equal(d.range.start.line, 2);
  assert.match(
    d.message,
    /by import paddle \(line 2: paddle >=2\.1 initialises CUDA when imported \(read in PaddlePaddle\/Paddle python\/paddle\/base\/__init__\.py:196\)\)/,
  );
  assert.equal((await lintCode(write("CUDA_VISIBLE_DEVICES", "import paddle.fluid as fluid"), "GPU001")).length, 1);
  assert.deepEqual(
    await lintCode(write("PYTORCH_CUDA_ALLOC_CONF"), "GPU001"),
    [],
    "Paddle does not read torch's variables",
  );
});

test("magic_pdf's submodules (read: doc_analyze_by_custom_model imports paddle at module level in 0.10.6 to 1.2.2) initialise only where the project pins such a release; 1.3.0 and later (the newest, so unpinned) do not", async () => {
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  const libs = ["magic_pdf.model.doc_analyze_by_custom_model", "magic_pdf.tools.common", "magic_pdf.tools.cli"];
  for (const lib of libs) {
    assert.ok(eager({ "magic-pdf": "==1.0.1" }).includes(lib), lib);
    assert.ok(!eager({}).includes(lib), `${lib}: unpinned gets 1.3.x, which imports no paddle`);
    assert.ok(!eager({ "magic-pdf": "==0.10.5" }).includes(lib), lib);
    assert.ok(isCatalogued(`${lib}.do_parse`), lib);
  }
  assert.ok(!isCatalogued("magic_pdf.pipe.UNIPipe"), "only the modules read are catalogued");
  assert.equal(EAGER_INIT_FRAMEWORK.get("magic_pdf.tools.common"), "paddle");
  const options = { eagerInitModules: eager({ "magic-pdf": "==1.0.1" }) };
  const code =
    'import os\nimport torch\nfrom magic_pdf.model.doc_analyze_by_custom_model import ModelSingleton\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const [d] = await lintCode(code, "GPU001", options);
  assert.equal(d.range.start.line, 3);
  assert.match(
    d.message,
    /magic_pdf\.model\.doc_analyze_by_custom_model >=0\.10\.6,<1\.3\.0 initialises CUDA when imported \(read in opendatalab\/MinerU magic_pdf\/model\/doc_analyze_by_custom_model\.py:5\)/,
  );
  const viaCli = 'import os\nfrom magic_pdf.tools.cli import do_parse\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  assert.match((await lintCode(viaCli, "GPU001", options))[0].message, /magic_pdf\.tools\.cli >=0\.10\.6,<1\.3\.0/);
  assert.deepEqual(await lintCode(code, "GPU001"), [], "unpinned: magic-pdf 1.3.x");
});

test("mmengine (read: mmengine.device works out its DEVICE with torch.cuda.is_available() at import) and the subpackages that import it initialise CUDA; `import mmengine` and mmengine.config do not", async () => {
  const eager = eagerModulesOf(applicableEntries({}));
  for (const lib of ["mmengine.device", "mmengine.runner", "mmengine.model", "mmengine.dist", "mmengine.dataset"])
    assert.ok(eager.includes(lib), lib);
  assert.equal(
    EAGER_INIT_DEPTH.get("mmengine.runner"),
    "nvml",
    "is_available(): the CUDA variables freeze, torch's allocator ones do not",
  );
  assert.ok(!eagerModulesOf(applicableEntries({ mmengine: "==0.2.0" })).includes("mmengine.runner"), "before v0.3.0");
  // OpenMMLab's tools/train.py shape: the Runner import comes first, the GPU choice in main().
  const train = (imports: string) =>
    `import os\n${imports}\n\n\ndef main():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n    runner = Runner.from_cfg(Config.fromfile("cfg.py"))\n    runner.train()\n\n\nif __name__ == "__main__":\n    main()\n`;
  const [d, ...more] = await lintCode(
    train("from mmengine.config import Config\nfrom mmengine.runner import Runner"),
    "GPU001",
  );
  assert.equal(more.length, 0);
  assert.equal(d.range.start.line, 6);
  assert.match(
    d.message,
    /mmengine\.runner >=0\.3\.0 initialises CUDA when imported \(read in open-mmlab\/mmengine mmengine\/runner\/__init__\.py:4\)/,
  );
  assert.deepEqual(await lintCode(train("from mmengine.config import Config\nimport mmengine"), "GPU001"), []);
  assert.ok(isCatalogued("mmengine.config.Config"), "catalogued as initialising nothing: GPU002 names no suspect");
  assert.equal(
    (
      await lintCode(
        train("from mmengine.utils.dl_utils import collect_env\nfrom mmengine.config import Config"),
        "GPU001",
      )
    ).length,
    1,
    "mmengine.utils.dl_utils imports mmengine.device",
  );
  assert.deepEqual(
    await lintCode(
      train("from mmengine.config import Config\nfrom mmengine.runner import Runner").replace(
        "CUDA_VISIBLE_DEVICES",
        "PYTORCH_CUDA_ALLOC_CONF",
      ),
      "GPU001",
    ),
    [],
    "is_available() leaves the allocator variables alone",
  );
});

test("pycuda.autoinit (read: cuda.init() and make_default_context() at module level) initialises the driver: a CUDA_VISIBLE_DEVICES write after it is GPU001; pycuda.driver alone is not catalogued as initialising", async () => {
  assert.ok(eagerModulesOf(applicableEntries({})).includes("pycuda.autoinit"));
  const src = (imp: string) => `import os\n${imp}\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\n`;
  const [d] = await lintCode(src("import pycuda.autoinit"), "GPU001");
  assert.match(
    d.message,
    /pycuda\.autoinit >=0\.93 initialises CUDA when imported \(read in inducer\/pycuda pycuda\/autoinit\.py:9\)/,
  );
  assert.deepEqual(await lintCode(src("import pycuda.driver as cuda"), "GPU001"), []);
});

test("bitsandbytes before 0.43.1 (read: its CUDA setup at import calls torch.cuda.is_available() and cuInit, from 0.41.0 the device capability) initialises where the project pins it; before 0.36.0 it is not catalogued", () => {
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  for (const v of ["==0.36.0", "==0.38.1", "==0.40.2", "==0.41.1", "==0.42.0", "==0.43.0", "==0.43.1", ">=0.45"])
    assert.ok(eager({ bitsandbytes: v }).includes("bitsandbytes"), v);
  assert.ok(!eager({ bitsandbytes: "==0.35.4" }).includes("bitsandbytes"));
  assert.ok(!isCatalogued("bitsandbytes", { bitsandbytes: "==0.35.4" }), "no entry for 0.35: GPU002 names it");
  const at = (v: string) => applicableEntries({ bitsandbytes: v }).find((e) => e.library === "bitsandbytes")!;
  assert.deepEqual([at("==0.38.1").versions, at("==0.38.1").depth], [">=0.36.0,<0.41.0", "driver"]);
  assert.deepEqual([at("==0.41.1").versions, at("==0.41.1").depth], [">=0.41.0,<0.43.1", "context"]);
  // Unpinned: the newest releases' entry (>=0.43.1) alone.
  assert.deepEqual(
    applicableEntries({})
      .filter((e) => e.library === "bitsandbytes")
      .map((e) => e.versions),
    [">=0.43.1"],
  );
});

test("peft imports bitsandbytes where it is installed (read: before 0.7.1, in 0.10.x and from 0.20.0): GPU001 where the project pins both in range, no GPU001 outside, GPU002 names peft where a pin is missing", async () => {
  const pinsOf = (text: string) => libraryPins(text.split("\n"));
  const settled = pinsOf("peft==0.3.0\nbitsandbytes==0.38.1");
  const eager = (pins: Record<string, string>) => eagerModulesOf(applicableEntries(pins));
  assert.ok(eager(settled).includes("peft"));
  assert.ok(eager({ peft: "==0.10.0", bitsandbytes: "==0.42.0" }).includes("peft"));
  assert.ok(eager({ peft: "==0.21.0", bitsandbytes: "==0.49.0" }).includes("peft"));
  for (const v of ["==0.7.1", "==0.8.2", "==0.11.1", "==0.13.2", "==0.18.1"]) {
    assert.ok(!eager({ peft: v, bitsandbytes: "==0.42.0" }).includes("peft"), v);
    assert.ok(isCatalogued("peft", { peft: v, bitsandbytes: "==0.42.0" }), `${v}: read as importing nothing`);
  }
  // Not settled: peft or bitsandbytes unpinned, or bitsandbytes pinned where no entry says its import initialises.
  const unsettledPins: Record<string, string>[] = [
    {},
    { peft: "==0.3.0" },
    { bitsandbytes: "==0.38.1" },
    { peft: "==0.3.0", bitsandbytes: "==0.35.0" },
  ];
  for (const pins of unsettledPins) {
    assert.ok(!eager(pins).includes("peft"), JSON.stringify(pins));
    assert.ok(!isCatalogued("peft", pins), JSON.stringify(pins));
    assert.equal(throughPending(pins).filter((e) => e.library === "peft").length, 1, JSON.stringify(pins));
  }
  assert.equal(DEFAULT_EAGER_INIT_MODULES.includes("peft"), false);
  assert.equal(
    throughNote("peft", { peft: "==0.3.0" }),
    "peft >=0.1.0,<0.7.1 imports bitsandbytes where it is installed (read in huggingface/peft src/peft/tuners/lora.py:40), and importing bitsandbytes >=0.36.0 initialises CUDA; pinning bitsandbytes settles it",
  );
  // peft 0.19.x: no entry (it imports transformer_engine where installed): not catalogued, no note.
  assert.ok(!isCatalogued("peft", { peft: "==0.19.1", bitsandbytes: "==0.45.0" }));
  assert.equal(throughNote("peft", { peft: "==0.19.1", bitsandbytes: "==0.45.0" }), null);

  const code =
    'import os\nimport torch\nfrom peft import LoraConfig, get_peft_model\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"\n';
  const run = (pins: Record<string, string>, code_: string, preview = false) =>
    lintCode(code, code_, { eagerInitModules: eager(pins), libraryPins: pins, ...(preview ? { preview } : {}) });
  const [d] = await run(settled, "GPU001");
  assert.equal(d.range.start.line, 4);
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set after CUDA was initialised by from peft import LoraConfig (line 3: peft >=0.1.0,<0.7.1 imports bitsandbytes at import (read in huggingface/peft src/peft/tuners/lora.py:40), and bitsandbytes >=0.36.0,<0.41.0 initialises CUDA when imported (read in bitsandbytes-foundation/bitsandbytes bitsandbytes/cuda_setup/main.py:323)): it has no effect in this process (the program stays on the GPUs it already saw)",
  );
  // Pinned outside the ranges: no GPU001, and peft (read as importing nothing) is no suspect.
  const outside = { peft: "==0.8.0", bitsandbytes: "==0.38.1" };
  assert.deepEqual(await run(outside, "GPU001"), []);
  const [quiet] = await run(outside, "GPU002", true);
  assert.match(quiet.message, /it works today \(importing torch leaves CUDA uninitialised, measured\)/);
  // Unpinned: as for every ranged entry, no GPU001; GPU002 (default: peft brings torch) says what the catalogue knows.
  assert.deepEqual(await run({}, "GPU001"), []);
  const [unsettled] = await run({}, "GPU002");
  assert.equal(
    unsettled.message,
    "CUDA_VISIBLE_DEVICES is set after `import torch` (line 2): it works only if `peft` (imported on line 3) does not initialise CUDA: peft >=0.20.0 imports bitsandbytes where it is installed (read in huggingface/peft src/peft/helpers.py:27), and importing bitsandbytes >=0.36.0 initialises CUDA; pinning peft and bitsandbytes settles it; set it before the import",
  );
});

test("GPU002 does not name a module of the project as a library missing from the catalogue: the engine reads the project's modules", () => {
  const dir = projectTree({
    "helpers.py": "X = 1\n",
    "models/__init__.py": "",
    "models/net.py": "import torch\n\n\nclass Net:\n    pass\n",
    "main.py":
      'import os\nimport torch\nimport helpers\nfrom models.net import Net\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
  });
  const path = join(dir, "main.py");
  const project = new ProjectIndex().lookupFor(path, {
    eagerInitModules: DEFAULT_EAGER_INIT_MODULES,
    torchBelow24: false,
  });
  const r = lintPython(readFileSync(path, "utf8"), { project, preview: true });
  r.tree?.delete();
  const messages = r.diagnostics.filter((d) => d.code === "GPU002").map((d) => d.message);
  assert.equal(messages.length, 1);
  assert.doesNotMatch(messages[0], /helpers|models/);
  assert.match(messages[0], /it works today/);
  rmSync(dir, { recursive: true, force: true });
});
