/** The CLI on Dockerfiles, compose files and Kubernetes manifests (GPU018-GPU020): built dist/cli.js, real files. */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../../../support/helpers";

const CLI = join(ROOT, "dist", "cli.js");
const run = (args: string[], opts: { cwd?: string; input?: string } = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", input: opts.input, cwd: opts.cwd ?? ROOT });

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
});

interface Row {
  code: string;
  message: string;
  filename: string;
  location: { row: number; column: number };
  end_location: { row: number; column: number };
  severity: string;
  cell: number | null;
  noqa_row: number;
  fix: { applicability: string; message: string } | null;
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
spec:
  template:
    spec:
      containers:
        - name: train
          image: pytorch/pytorch:latest
          resources:
            requests:
              nvidia.com/gpu: 1
`;

const COMPOSE = `services:
  train:
    image: pytorch/pytorch:latest
    environment:
      - CUDA_VISIBLE_DEVICES=1
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              device_ids: ["1"]
              capabilities: [gpu]
  serve:
    image: vllm/vllm-openai:latest
    environment: {LABEL: "😀", CUDA_VISIBLE_DEVICES: "0"}
    deploy:
      resources:
        reservations:
          devices:
            - {driver: nvidia, count: 2}
`;

const DOCKERFILE = `FROM pytorch/pytorch:latest
ENV PYTHONUNBUFFERED=1 \\
    CUDA_VISIBLE_DEVICES=0
# noqa: GPU019
ENV CUDA_VISIBLE_DEVICES=1
CMD ["python", "train.py"]
`;

/** A project folder with the given files (paths relative to it). */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-manifests-"));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

const rows = (stdout: string): Row[] => JSON.parse(stdout) as Row[];
const brief = (r: Row) =>
  `${r.filename.split("/").pop()}:${r.location.row}:${r.location.column}-${r.end_location.row}:${r.end_location.column} ${r.code}`;

test("check reports a Deployment, a compose file and a Dockerfile given explicitly, with 1-based rows and columns", () => {
  const dir = project({ "k8s/deployment.yaml": DEPLOYMENT, "compose.yaml": COMPOSE, "Dockerfile": DOCKERFILE });
  const r = run([
    "check",
    "--format",
    "json",
    join(dir, "k8s", "deployment.yaml"),
    join(dir, "compose.yaml"),
    join(dir, "Dockerfile"),
  ]);
  assert.equal(r.status, 1, r.stderr);
  const all = rows(r.stdout);
  assert.deepEqual(all.map(brief), [
    "deployment.yaml:13:15-13:32 GPU018",
    "compose.yaml:5:9-5:31 GPU019",
    "compose.yaml:11:15-11:23 GPU020",
    "compose.yaml:16:32-16:57 GPU019", // after "😀": UTF-16 columns, as LSP counts them
    "compose.yaml:21:16-21:30 GPU020",
    "Dockerfile:3:5-3:27 GPU019",
  ]);
  const k8s = all[0];
  assert.equal(k8s.severity, "error");
  assert.equal(k8s.cell, null);
  assert.equal(k8s.noqa_row, 13);
  assert.deepEqual(k8s.fix && { a: k8s.fix.applicability, m: k8s.fix.message }, {
    a: "safe",
    m: "Set limits nvidia.com/gpu: 1 (equal to the request)",
  });
  assert.equal(all[1].severity, "warning");
  assert.equal(all[1].fix?.applicability, "unsafe");
});

test("folders are searched for Dockerfiles, compose files and Kubernetes YAML (hidden folders skipped)", () => {
  const dir = project({
    "deploy/k8s/deployment.yaml": DEPLOYMENT,
    "deploy/docker-compose.gpu.yml": COMPOSE,
    "docker/train.Dockerfile": DOCKERFILE,
    "docker/Dockerfile.dev": DOCKERFILE,
    "config/settings.yaml": "learning_rate: 0.1\nresources:\n  requests:\n    nvidia.com/gpu: 1\n",
    ".hidden/Dockerfile": DOCKERFILE,
    "train.py": "import torch\n",
  });
  const r = run(["check", "--format", "json", "."], { cwd: dir });
  assert.equal(r.status, 1, r.stderr);
  const files = [...new Set(rows(r.stdout).map((d) => d.filename.slice(dir.length + 1)))].sort();
  assert.deepEqual(files, [
    "deploy/docker-compose.gpu.yml",
    "deploy/k8s/deployment.yaml",
    "docker/Dockerfile.dev",
    "docker/train.Dockerfile",
  ]);
  const text = run(["check", "."], { cwd: dir });
  assert.match(text.stdout, /^deploy\/k8s\/deployment\.yaml:13:15: error GPU018 /m);
  assert.match(text.stdout, /^docker\/train\.Dockerfile:3:5: warning GPU019 /m);
});

test("--format github and sarif carry the manifest rows and rules", () => {
  const dir = project({ "k8s/deployment.yaml": DEPLOYMENT });
  const gh = run(["check", "--format", "github", "k8s/deployment.yaml"], { cwd: dir });
  assert.equal(
    gh.stdout.trim(),
    "::error title=gpu-pilot (GPU018),file=k8s/deployment.yaml,line=13,col=15,endLine=13,endColumn=32::GPU018 " +
      rows(run(["check", "--format", "json", "k8s/deployment.yaml"], { cwd: dir }).stdout)[0].message.replace(
        /%/g,
        "%25",
      ),
  );
  const sarif = JSON.parse(run(["check", "--format", "sarif", "k8s/deployment.yaml"], { cwd: dir }).stdout);
  const driver = sarif.runs[0].tool.driver;
  for (const code of ["GPU018", "GPU019", "GPU020"])
    assert.ok(
      driver.rules.some((x: { id: string }) => x.id === code),
      code,
    );
  const gpu018 = driver.rules.find((x: { id: string }) => x.id === "GPU018");
  assert.match(gpu018.help.markdown, /```yaml\n/);
  assert.deepEqual(sarif.runs[0].results[0].locations[0].physicalLocation.region, {
    startLine: 13,
    startColumn: 15,
    endLine: 13,
    endColumn: 32,
  });
});

test("--fix applies the safe manifest fixes (limit, capabilities) and leaves the unsafe ones (removing env) to the user", () => {
  const dir = project({ "k8s/deployment.yaml": DEPLOYMENT, "compose.yaml": COMPOSE, "Dockerfile": DOCKERFILE });
  const r = run(["check", "--fix", "."], { cwd: dir });
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stdout, /\(2 fixed, 4 remaining\)/);
  assert.ok(
    readFileSync(join(dir, "k8s", "deployment.yaml"), "utf8").endsWith(
      "            requests:\n              nvidia.com/gpu: 1\n            limits:\n              nvidia.com/gpu: 1\n",
    ),
  );
  assert.match(
    readFileSync(join(dir, "compose.yaml"), "utf8"),
    /- \{driver: nvidia, count: 2, capabilities: \[gpu\]\}/,
  );
  assert.equal(readFileSync(join(dir, "Dockerfile"), "utf8"), DOCKERFILE);
  const again = rows(run(["check", "--format", "json", "."], { cwd: dir }).stdout).map(brief);
  assert.deepEqual(again, [
    "Dockerfile:3:5-3:27 GPU019",
    "compose.yaml:5:9-5:31 GPU019",
    "compose.yaml:11:15-11:23 GPU020",
    "compose.yaml:16:32-16:57 GPU019",
  ]);
});

test("[tool.gpu-pilot] applies to manifests: per-file-ignores, ignore and severity", () => {
  const dir = project({
    "pyproject.toml":
      '[tool.gpu-pilot]\nignore = ["GPU020"]\nseverity = { GPU019 = "information" }\n\n[tool.gpu-pilot.per-file-ignores]\n"k8s/*.yaml" = ["GPU018"]\n',
    "k8s/deployment.yaml": DEPLOYMENT,
    "other/deployment.yaml": DEPLOYMENT,
    "compose.yaml": COMPOSE,
  });
  const r = run(["check", "--format", "json", "."], { cwd: dir });
  assert.equal(r.stderr, "");
  const all = rows(r.stdout);
  assert.deepEqual([...new Set(all.map((d) => `${d.filename.slice(dir.length + 1)} ${d.code} ${d.severity}`))].sort(), [
    "compose.yaml GPU019 information",
    "other/deployment.yaml GPU018 error",
  ]);
  const selected = rows(run(["check", "--format", "json", "--select", "GPU018", "."], { cwd: dir }).stdout);
  assert.deepEqual(
    selected.map((d) => d.filename.slice(dir.length + 1)),
    ["other/deployment.yaml"],
  );
});

test("noqa works in YAML (on the line) and Dockerfiles (the comment line above), and stdin takes a manifest name", () => {
  const dir = project({ "k8s/pod.yaml": DEPLOYMENT.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 1  # noqa: GPU018") });
  const r = run(["check", "k8s/pod.yaml"], { cwd: dir });
  assert.equal(r.status, 0, r.stdout);
  assert.match(r.stdout, /All checks passed!/);
  const stdin = run(["check", "--format", "json", "--stdin-filename", "Dockerfile"], { input: DOCKERFILE });
  assert.equal(stdin.status, 1);
  assert.deepEqual(rows(stdin.stdout).map(brief), ["Dockerfile:3:5-3:27 GPU019"]);
  const fixed = run(["check", "--fix", "--stdin-filename", "deploy/compose.yaml"], {
    input:
      "services:\n  a:\n    image: i\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 1\n",
  });
  assert.equal(fixed.status, 0, fixed.stderr);
  assert.ok(fixed.stdout.endsWith("              count: 1\n              capabilities: [gpu]\n"), fixed.stdout);
});

test("broken YAML (a Helm template) is skipped without an error; an empty Dockerfile is clean", () => {
  const dir = project({
    "chart/templates/deployment.yaml": "spec:\n  replicas: {{ .Values.replicas }}\n  x: [\n",
    "Dockerfile": "",
  });
  const r = run(["check", "."], { cwd: dir });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  assert.equal(r.stderr, "");
});
