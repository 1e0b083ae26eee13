import assert from "node:assert/strict";
import { test } from "node:test";
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { manifestFixtureTests, lintManifestCode } from "./manifestFixtureCheck";
import { manifestKindOf } from "../../../server/src/engine/manifests/files";
import { lintManifest } from "../../../server/src/engine/manifests/lintManifest";
import { ROOT } from "../support/helpers";
import type { LintOptions } from "../../../server/src/engine/lint";

/** A project folder (with `.git`, so the searches stop there) holding `files`; returns its path. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-gpu076-"));
  mkdirSync(join(dir, ".git"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

// The fixtures read each other (the settings modules name the dotenv files): they are linted as
// files of a project of their own, a copy of the fixture folder with `.git`.
const FIXTURES = project({});
cpSync(join(ROOT, "test", "fixtures", "rules", "GPU076"), FIXTURES, { recursive: true });
manifestFixtureTests("GPU076", {}, FIXTURES);

const SETTINGS =
  'from typing import Optional\n\nfrom dotenv import find_dotenv\nfrom pydantic_settings import BaseSettings\n\n\nclass Settings(BaseSettings):\n    TORCH_DEVICE: Optional[str] = None\n\n    class Config:\n        env_file = find_dotenv("local.env")\n        extra = "ignore"\n\n\nsettings = Settings()\n';
const LOCAL = "# overrides\nTORCH_DEVICE=cuda\nCUDA_VISIBLE_DEVICES=1\n";

/** GPU076's findings on the dotenv file `name` of a project. */
function check(files: Record<string, string>, name = "local.env", options: LintOptions = {}) {
  const dir = project(files);
  return lintManifestCode(files[name], "dotenv", "GPU076", options, join(dir, name));
}

test("GPU076: dotenv files are a manifest kind of their own, by name", () => {
  for (const n of ["local.env", ".env", ".env.prod", "x/prod.ENV"]) assert.equal(manifestKindOf(n), "dotenv", n);
  for (const n of ["env.py", "environment.yml", "envs", ".envrc"]) assert.notEqual(manifestKindOf(n), "dotenv", n);
  assert.equal(manifestKindOf("local.env", "plaintext"), "dotenv");
});

test("GPU076: the reported shape: warning on the variable's line, related to the env_file", () => {
  const [d, ...rest] = check({ "app/settings.py": SETTINGS, "local.env": LOCAL });
  assert.equal(rest.length, 0);
  assert.equal(d.severity, "warning");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 22 } });
  assert.equal(
    d.message,
    "CUDA_VISIBLE_DEVICES is set in local.env, the env_file of Settings (app/settings.py line 11): BaseSettings reads the file only into the settings' fields and never puts it into os.environ, so CUDA and the frameworks never see it; set it where the program starts (`CUDA_VISIBLE_DEVICES=1 python ...`)",
  );
  assert.deepEqual(
    d.related!.map((r) => [r.file?.endsWith("settings.py"), r.range.start.line, r.message]),
    [[true, 10, "Settings reads local.env (env_file); nothing in the project exports it to the process environment"]],
  );
});

test("GPU076: a file named .env gets a preview finding only (VS Code's python.envFile and pipenv load it)", () => {
  const settings = SETTINGS.replace('find_dotenv("local.env")', '".env"');
  const files = { "settings.py": settings, ".env": LOCAL };
  assert.deepEqual(check(files, ".env"), []);
  assert.equal(check(files, ".env", { preview: true }).length, 1);
  assert.deepEqual(check({ ...files, Pipfile: "[packages]\n" }, ".env", { preview: true }), []);
});

test("GPU076: v2 model_config, a dict config and the _env_file keyword name the file; a computed path does not", () => {
  const v2 =
    'from pydantic_settings import BaseSettings, SettingsConfigDict\n\nclass S(BaseSettings):\n    model_config = SettingsConfigDict(env_file="local.env")\n';
  assert.equal(check({ "settings.py": v2, "local.env": LOCAL }).length, 1);
  const dict =
    'import pydantic_settings\n\nclass S(pydantic_settings.BaseSettings):\n    model_config = {"env_file": "local.env"}\n';
  assert.equal(check({ "settings.py": dict, "local.env": LOCAL }).length, 1);
  const kw =
    'from pydantic.v1 import BaseSettings\n\nclass S(BaseSettings):\n    x: int = 1\n\ns = S(_env_file="local.env")\n';
  assert.equal(check({ "settings.py": kw, "local.env": LOCAL }).length, 1);
  const computed = v2.replace('"local.env"', 'os.path.join(ROOT, "local.env")');
  assert.deepEqual(check({ "settings.py": computed, "local.env": LOCAL }), []);
  const other = v2.replace('"local.env"', '"other.env"');
  assert.deepEqual(check({ "settings.py": other, "local.env": LOCAL }), []);
  const notSettings = v2.replace(
    "BaseSettings, SettingsConfigDict",
    "SettingsConfigDict\nfrom pydantic import BaseModel as BaseSettings",
  );
  assert.deepEqual(check({ "settings.py": notSettings, "local.env": LOCAL }), []);
});

test("GPU076: silent where Python code of the project exports the file or the variable", () => {
  const base = { "app/settings.py": SETTINGS, "local.env": LOCAL };
  const silent = (name: string, text: string) => assert.deepEqual(check({ ...base, [name]: text }), [], text);
  silent("main.py", 'from dotenv import load_dotenv\nload_dotenv("local.env")\n');
  silent("main.py", "from dotenv import load_dotenv, find_dotenv\nload_dotenv(find_dotenv(PATH))\n");
  silent(
    "main.py",
    'import os\nfrom dotenv import dotenv_values\nfor k, v in dotenv_values("local.env").items():\n    os.environ[k] = v\n',
  );
  silent("main.py", "import os\nfrom app.settings import settings\nos.environ.update(settings.dict())\n");
  silent("main.py", 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = settings.CUDA_VISIBLE_DEVICES\n');
  // load_dotenv() names .env, and a literal other file is another file: the finding stays.
  const kept = (text: string) => assert.equal(check({ ...base, "main.py": text }).length, 1, text);
  kept("from dotenv import load_dotenv\nload_dotenv()\n");
  kept('from dotenv import load_dotenv\nload_dotenv("other.env")\n');
  kept('import os\nos.environ["TOKENIZERS_PARALLELISM"] = "false"\n');
});

test("GPU076: silent where a script, Makefile, compose file, document or editor configuration exports the file", () => {
  const base = { "app/settings.py": SETTINGS, "local.env": LOCAL };
  const silent = (name: string, text: string) => assert.deepEqual(check({ ...base, [name]: text }), [], name);
  silent("run.sh", "#!/bin/bash\nset -a\n. ./local.env\nset +a\npython main.py\n");
  silent("scripts/run.sh", "#!/bin/bash\nexport $(grep -v '^#' local.env | xargs)\npython main.py\n");
  silent("Makefile", "include local.env\nexport\nrun:\n\tpython main.py\n");
  silent("compose.yaml", "services:\n  app:\n    build: .\n    env_file: local.env\n");
  silent("README.md", "# App\n\nRun `set -a; source local.env; set +a` first.\n");
  silent(".devcontainer/devcontainer.json", '{ "runArgs": ["--env-file", "local.env"] }\n');
  silent(".vscode/launch.json", '{ "configurations": [{ "envFile": "${workspaceFolder}/local.env" }] }\n');
  silent(".envrc", "dotenv local.env\n");
  // A comment, a README line that only names the file, and another file's name are no export.
  const kept = (name: string, text: string) => assert.equal(check({ ...base, [name]: text }).length, 1, name);
  kept("run.sh", "#!/bin/bash\n# the GPU is set in local.env\npython main.py\n");
  kept("README.md", "Copy local.env.example to local.env and edit it.\n");
  kept("run.sh", "#!/bin/bash\nsource local.env.example\npython main.py\n");
});

test("GPU076: a dotenv file is read by no other manifest rule (a shell rule would flag this typo)", () => {
  const r = lintManifest("CUDA_VISIBLE_DEVICE=1\nexport CUDA_VISIBLE_DEVICES=0\n", "dotenv", { preview: true });
  assert.deepEqual(r.diagnostics, []);
  assert.equal(
    lintManifest("CUDA_VISIBLE_DEVICE=1 python train.py\n", "jobscript", { preview: true }).diagnostics.length,
    1,
  );
});

test("GPU076: silent where the project copies settings or unnamed keys into an environment, or reads the setting itself", () => {
  const base = { "app/settings.py": SETTINGS, "local.env": LOCAL };
  const silent = (text: string) => assert.deepEqual(check({ ...base, "main.py": text }), [], text);
  silent(
    "import os\nfrom app.settings import settings\nfor k, v in settings.model_dump().items():\n    os.environ[k.upper()] = str(v)\n",
  );
  silent("import os\nos.environ |= extra\n");
  silent("import os\nos.putenv(name, value)\n");
  silent("import os, subprocess\nsubprocess.run(cmd, env={**os.environ, **settings.model_dump()})\n");
  silent("import subprocess\nsubprocess.run(cmd, env=dict(settings.dict()))\n");
  silent("from app.settings import settings\nprint(settings.cuda_visible_devices)\n");
  // A child process given a copy of os.environ, and an attribute of another name, change nothing.
  const kept = (text: string) => assert.equal(check({ ...base, "main.py": text }).length, 1, text);
  kept("import os, subprocess\nsubprocess.run(cmd, env={**os.environ, 'A': '1'})\n");
  kept("from app.settings import settings\nprint(settings.TORCH_DEVICE)\n");
});

test("GPU076: a settings field that names the variable by an alias counts as the setting, when the project reads it", () => {
  const settings = SETTINGS.replace(
    "    TORCH_DEVICE: Optional[str] = None\n",
    '    TORCH_DEVICE: Optional[str] = None\n    gpus: str = Field("0", alias="CUDA_VISIBLE_DEVICES")\n',
  ).replace(
    "from pydantic_settings import BaseSettings\n",
    "from pydantic import Field\nfrom pydantic_settings import BaseSettings\n",
  );
  const files = { "app/settings.py": settings, "local.env": LOCAL };
  assert.equal(check(files).length, 1);
  const used = "import torch\nfrom app.settings import settings\ntorch.cuda.set_device(int(settings.gpus))\n";
  assert.deepEqual(check({ ...files, "main.py": used }), []);
});
