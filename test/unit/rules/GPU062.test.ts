import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { lintManifest } from "../../../server/src/engine/manifests/lintManifest";
import { lint } from "../support/helpers";
import type { LintOptions } from "../../../server/src/engine/lint";

const PREVIEW = { preview: true };

// The fixtures are linted as the files they are: GPU062 reads the task modules beside the configs.
manifestFixtureTests("GPU062", PREVIEW, true);

/** A project folder (with `.git`, so the search stops there) holding `files`; returns the path of a file in it. */
function project(files: Record<string, string>): (name: string) => string {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu062-"));
  mkdirSync(join(dir, ".git"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return (name) => join(dir, name);
}

/** GPU062's findings on the config `name` of a project. */
function check(files: Record<string, string>, name: string, options: LintOptions = PREVIEW) {
  const at = project(files);
  return lintManifestCode(files[name], "yaml", "GPU062", options, at(name));
}

/** An entry module: `top` at module level, then a task function using configs/<configName>, started from `__main__`. */
const entry = (top: string, configName = "run", body = "    print(cfg)\n", mainBlock = true): string =>
  `${top}\n\n@hydra.main(version_base=None, config_path="configs", config_name="${configName}")\ndef main(cfg):\n${body}` +
  (mainBlock ? '\n\nif __name__ == "__main__":\n    main()\n' : "");

const CONFIG = 'seed: 3\nhydra:\n  job:\n    env_set:\n      CUDA_VISIBLE_DEVICES: "4,5"\n';

test("GPU062: the reported shape, env_set after `import torch` and an unknown library in the entry module: information, preview, on the entry's line, related to the import and @hydra.main", () => {
  const files = {
    "bench.py": entry("import time\n\nimport hydra\nimport torch\nfrom tokenlab.export import Exporter"),
    "configs/run.yaml": CONFIG,
  };
  const [d, ...rest] = check(files, "configs/run.yaml");
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "information");
  assert.deepEqual(d.range, { start: { line: 4, character: 6 }, end: { line: 4, character: 33 } });
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set by hydra.job.env_set, which Hydra applies only when it starts `main()` (bench.py line 7), after `import torch` (bench.py line 4): it works only if `tokenlab.export` (imported on bench.py line 5) does not initialise CUDA; it is not in GPU Pilot's catalogue of libraries that do (listed in GPU002's documentation); set it in the launch environment (`CUDA_VISIBLE_DEVICES=4,5 python bench.py`), or move the imports into `main()`",
  );
  assert.equal(d.related?.length, 2);
  assert.deepEqual(
    d.related!.map((r) => [r.file?.endsWith("bench.py"), r.range.start.line, r.message]),
    [
      [true, 3, "torch imported here"],
      [true, 6, "Hydra sets hydra.job.env_set when it starts main(); its primary config is run.yaml"],
    ],
  );
  // A library of no known GPU code in between: a preview finding, as GPU002's would be.
  assert.deepEqual(check(files, "configs/run.yaml", {}), []);
});

test("GPU062: the fixed shape (the framework imported inside the task function) is silent", () => {
  const files = {
    "bench.py": entry("import hydra", "run", "    import torch\n\n    print(torch.cuda.device_count())\n"),
    "configs/run.yaml": CONFIG,
  };
  assert.deepEqual(check(files, "configs/run.yaml"), []);
});

test("GPU062: an env_set entry that is no startup variable is silent", () => {
  const files = {
    "bench.py": entry("import hydra\nimport torch\nprint(torch.cuda.is_available())"),
    "configs/run.yaml": 'hydra:\n  job:\n    env_set:\n      OMP_NUM_THREADS: "2"\n      NCCL_DEBUG: INFO\n',
  };
  assert.deepEqual(check(files, "configs/run.yaml"), []);
});

test("GPU062: a config no @hydra.main names (another config folder, no task at all) is silent", () => {
  const other = {
    "bench.py": entry("import hydra\nimport torch\nprint(torch.cuda.is_available())").replace(
      'config_path="configs"',
      'config_path="conf"',
    ),
    "configs/run.yaml": CONFIG,
  };
  assert.deepEqual(check(other, "configs/run.yaml"), []);
  assert.deepEqual(check({ "configs/run.yaml": CONFIG }, "configs/run.yaml"), []);
  // Without a file name (an unsaved buffer) nothing is looked up.
  assert.deepEqual(lintManifestCode(CONFIG, "yaml", "GPU062", PREVIEW), []);
});

test("GPU062: an entry module that imports nothing GPU-related at its top level is silent", () => {
  const files = { "bench.py": entry("import os\nimport hydra\nimport numpy as np"), "configs/run.yaml": CONFIG };
  assert.deepEqual(check(files, "configs/run.yaml"), []);
});

test("GPU062: a catalogued library that initialises CUDA on import, or a CUDA call, before the task: error (GPU001's judgement), in the default set", () => {
  for (const top of [
    "import hydra\nimport torch\nimport deepspeed",
    "import hydra\nimport torch\nok = torch.cuda.is_available()",
  ]) {
    const files = { "train.py": entry(top), "configs/run.yaml": CONFIG };
    const [d, ...rest] = check(files, "configs/run.yaml", {});
    assert.equal(rest.length, 0, top);
    assert.equal(d.severity, "error", top);
    assert.match(
      d.message,
      /after CUDA was initialised by (import deepspeed \(train\.py line 3: deepspeed >=0\.14\.1 initialises CUDA when imported|torch\.cuda\.is_available\(\) \(train\.py line 3\))/,
    );
    assert.match(
      d.message,
      /: it has no effect in this process \(the program stays on the GPUs it already saw\); set it in the launch environment \(`CUDA_VISIBLE_DEVICES=4,5 python train\.py`\), or move what initialises CUDA into `main\(\)`$/,
    );
    assert.equal(
      d.related![0].message,
      top.includes("deepspeed")
        ? "CUDA initialised here by import deepspeed"
        : "CUDA initialised here by torch.cuda.is_available()",
    );
  }
});

/**
 * The judgement is GPU001's and GPU002's: for each module, GPU062 on the env_set entry reports what
 * they report on the same write written as the task function's first statement.
 */
test("GPU062 judges the entry as GPU001/GPU002 judge a write at the start of the task function", async () => {
  const tops = [
    "import os\nimport hydra\nimport torch",
    "import os\nimport hydra\nimport torch\nfrom diffusers import UNet2DModel",
    "import os\nimport hydra\nimport torch\nimport bitsandbytes",
    "import os\nimport hydra\nimport jax\njax.devices()",
    "import os\nimport hydra",
    "import os\nimport hydra\nimport torch\nx = torch.ones(2).cuda()",
  ];
  for (const variable of ["CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF", "XLA_PYTHON_CLIENT_PREALLOCATE"]) {
    for (const top of tops) {
      for (const preview of [false, true]) {
        const config = `hydra:\n  job:\n    env_set:\n      ${variable}: "1"\n`;
        const ours = check({ "app.py": entry(top), "configs/run.yaml": config }, "configs/run.yaml", { preview }).map(
          (d) => d.severity,
        );
        const write = `    os.environ["${variable}"] = "1"\n    print(cfg)\n`;
        const theirs = (await lint(entry(top, "run", write), { preview }))
          .filter(
            (d) => (d.code === "GPU001" || d.code === "GPU002") && d.range.start.line === top.split("\n").length + 3,
          )
          .map((d) => d.severity);
        assert.deepEqual(ours, theirs, `${variable} after ${JSON.stringify(top)}${preview ? " (preview)" : ""}`);
      }
    }
  }
});

test("GPU062: a task function the module never calls is judged as GPU001 judges a write in an uncalled function", () => {
  const call = entry("import hydra\nimport torch\nok = torch.cuda.is_available()", "run", "    print(cfg)\n", false);
  const [d] = check({ "app.py": call, "configs/run.yaml": CONFIG }, "configs/run.yaml");
  assert.equal(d.severity, "warning");
  // After a mere import (a catalogued one too), GPU001 is silent on an uncalled function and GPU002 does not follow it.
  const imports = entry("import hydra\nimport torch\nimport deepspeed", "run", "    print(cfg)\n", false);
  assert.deepEqual(check({ "app.py": imports, "configs/run.yaml": CONFIG }, "configs/run.yaml"), []);
});

test("GPU062: a task function that starts a child process is silent (GPU001: the write may be for the child)", () => {
  const body = '    import subprocess\n\n    subprocess.run(["python", "worker.py"], check=True)\n';
  const files = {
    "app.py": entry("import hydra\nimport torch\nok = torch.cuda.is_available()", "run", body),
    "configs/run.yaml": CONFIG,
  };
  assert.deepEqual(check(files, "configs/run.yaml"), []);
});

test("GPU062: config_path relative to the module's folder (`../configs` from scripts/), config_name with `.yaml`, positional arguments", () => {
  const top = "import hydra\nimport torch\nok = torch.cuda.is_available()";
  const sibling = entry(top).replace(
    'config_path="configs", config_name="run"',
    'config_path="../configs", config_name="run.yaml"',
  );
  assert.equal(check({ "scripts/train.py": sibling, "configs/run.yaml": CONFIG }, "configs/run.yaml").length, 1);
  const positional = entry(top).replace(
    'version_base=None, config_path="configs", config_name="run"',
    '"configs", "run"',
  );
  assert.equal(check({ "train.py": positional, "configs/run.yaml": CONFIG }, "configs/run.yaml").length, 1);
  // A `pkg://` path and a config_path that is not a literal are not followed.
  const pkg = entry(top).replace('config_path="configs"', 'config_path="pkg://proj.configs"');
  assert.deepEqual(check({ "train.py": pkg, "configs/run.yaml": CONFIG }, "configs/run.yaml"), []);
  const computed = entry(`${top}\nCONF = "configs"`).replace('config_path="configs"', "config_path=CONF");
  assert.deepEqual(check({ "train.py": computed, "configs/run.yaml": CONFIG }, "configs/run.yaml"), []);
});

test("GPU062: another config of the task's folder (chosen with --config-name) counts when no task names it; a named config is judged with its own task only", () => {
  const torchTop = "import hydra\nimport torch\nok = torch.cuda.is_available()";
  const files = {
    "train.py": entry(torchTop, "run"),
    "evaluate.py": entry("import hydra", "eval"),
    "configs/run.yaml": "seed: 1\n",
    "configs/eval.yaml": CONFIG,
    "configs/sweep_a.yaml": CONFIG,
  };
  // eval.yaml is evaluate.py's primary config, whose module imports nothing: silent.
  assert.deepEqual(check(files, "configs/eval.yaml"), []);
  // sweep_a.yaml is named by no task: judged with each task of the folder, the strongest verdict kept.
  const [d] = check(files, "configs/sweep_a.yaml");
  assert.equal(d.severity, "error");
  assert.equal(
    d.related![1].message,
    "Hydra sets hydra.job.env_set when it starts main(); sweep_a.yaml is in its config folder (chosen with --config-name)",
  );
});

test("GPU062: a `hydra` group option selected by the primary config's defaults list (`job.env_set`), and a root config listed there", () => {
  const top = "import hydra\nimport torch\nfrom diffusers import UNet2DModel";
  const group = "run:\n  dir: outputs\njob:\n  env_set:\n    CUDA_DEVICE_ORDER: PCI_BUS_ID\n";
  for (const entryLine of ["- hydra: custom", "- override hydra: custom", "- override /hydra: custom"]) {
    const files = {
      "train.py": entry(top),
      "configs/run.yaml": `defaults:\n  - _self_\n  - base\n  ${entryLine}\n\nseed: 1\n`,
      "configs/hydra/custom.yaml": group,
      "configs/base.yaml":
        "# @package _global_\nhydra:\n  job:\n    env_set:\n      PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True\n",
    };
    const [d] = check(files, "configs/hydra/custom.yaml", {});
    assert.equal(d?.severity, "information", entryLine);
    assert.deepEqual(d.range.start, { line: 4, character: 4 });
    assert.equal(
      d.related![1].message,
      "Hydra sets hydra.job.env_set when it starts main(); its primary config's defaults list includes custom.yaml",
    );
    assert.equal(check(files, "configs/base.yaml", {}).length, 1);
  }
  // A `hydra` option the defaults list does not select (chosen on the command line), or one with a package header: not followed.
  const unselected = { "train.py": entry(top), "configs/run.yaml": "seed: 1\n", "configs/hydra/custom.yaml": group };
  assert.deepEqual(check(unselected, "configs/hydra/custom.yaml"), []);
  const grouped = {
    ...unselected,
    "configs/run.yaml": "defaults:\n  - hydra: custom\n",
    "configs/hydra/custom.yaml": `# @package _group_\n${group}`,
  };
  assert.equal(check(grouped, "configs/hydra/custom.yaml").length, 1);
  const packaged = {
    ...unselected,
    "configs/run.yaml": "defaults:\n  - hydra: custom\n",
    "configs/hydra/custom.yaml": `# @package _global_\n${group}`,
  };
  assert.deepEqual(check(packaged, "configs/hydra/custom.yaml"), []);
});

test("GPU062: Kubernetes and compose manifests, `.yml` configs and YAML streams are not read", () => {
  const top = "import hydra\nimport torch\nok = torch.cuda.is_available()";
  const pod =
    'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n      image: i\n      env:\n        - name: CUDA_VISIBLE_DEVICES\n          value: "1"\nhydra:\n  job:\n    env_set:\n      CUDA_VISIBLE_DEVICES: "1"\n';
  const at = project({
    "train.py": entry(top),
    "configs/run.yaml": pod,
    "configs/compose.yaml": CONFIG,
    "configs/run.yml": CONFIG,
  });
  // The pod manifest: the same findings as with GPU062 off (GPU019 on its env entry), none of GPU062.
  const all = lintManifest(pod, "yaml", PREVIEW, { file: at("configs/run.yaml") }).diagnostics;
  const without = lintManifest(
    pod,
    "yaml",
    { ...PREVIEW, ignore: ["GPU062"] },
    { file: at("configs/run.yaml") },
  ).diagnostics;
  assert.deepEqual(all, without);
  assert.ok(all.some((d) => d.code === "GPU019"));
  assert.deepEqual(lintManifestCode(CONFIG, "compose", "GPU062", PREVIEW, at("configs/compose.yaml")), []);
  assert.deepEqual(lintManifestCode(CONFIG, "yaml", "GPU062", PREVIEW, at("configs/run.yml")), []);
  assert.deepEqual(lintManifestCode(`${CONFIG}---\nx: 1\n`, "yaml", "GPU062", PREVIEW, at("configs/run.yaml")), []);
});

test("GPU062: the trigger passes only YAML (not compose) holding `env_set` and a startup variable's name", async () => {
  const { rule } = await import("../../../server/src/engine/rules/GPU062-hydra-env-set-after-import");
  assert.equal(rule.meta.trigger(CONFIG, "yaml"), true);
  assert.equal(rule.meta.trigger(CONFIG, "compose"), false);
  assert.equal(rule.meta.trigger("hydra:\n  job:\n    env_set:\n      OMP_NUM_THREADS: 1\n", "yaml"), false);
  assert.equal(rule.meta.trigger("env:\n  - name: CUDA_VISIBLE_DEVICES\n", "yaml"), false);
});

test("GPU062 follows the project's library pins: accelerate pinned to 0.21 (whose import initialised CUDA) makes the entry GPU001's error; unpinned it stays preview", () => {
  const files = { "train.py": entry("import hydra\nimport torch\nimport accelerate"), "configs/run.yaml": CONFIG };
  const [d, ...rest] = check(files, "configs/run.yaml", { libraryPins: { accelerate: "==0.21.0" } });
  assert.equal(rest.length, 0);
  assert.equal(d?.severity, "error");
  assert.match(
    d.message,
    /after CUDA was initialised by import accelerate \(train\.py line 3: accelerate >=0\.21\.0,<0\.22\.0/,
  );
  assert.deepEqual(check(files, "configs/run.yaml", {}), []);
});
