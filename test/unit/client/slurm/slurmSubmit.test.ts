/**
 * The submit command's glue (client/src/slurm/submit.ts) with the stand-in vscode module: refused in
 * Restricted Mode (nothing written), the quick pick changes a value, an untitled file and its script
 * go to the scratch folder, an edited script is never overwritten, job scripts are told apart.
 */
import { FakeDocument, recorded, settings, Uri, window, workspace } from "../../support/client-fakeVscode";
import assert from "node:assert/strict";
import { after, test } from "node:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import {
  isJobScript,
  scriptPathFor,
  SlurmJobs,
  submitCommand,
  writeNewScript,
  type SlurmHost,
} from "../../../../client/src/slurm/submit";
import { lintManifest } from "../../../../server/src/engine/manifests/lintManifest";
import { initEngine } from "../../../../server/src/engine/lint";
import { runFacts } from "../../../../server/src/engine/runFacts";
import type { RunFactsResult } from "../../../../common/src/lsp/protocol";
import { ROOT } from "../../support/root";

const made: string[] = [];
after(() => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "gp-slurm-submit-"));
  made.push(d);
  return d;
}

function host(scratch: string): SlurmHost & { refreshed: number } {
  return {
    scratchFolder: scratch,
    refreshed: 0,
    refreshView() {
      this.refreshed++;
    },
    // No Slurm on this PATH: sinfo is not found at once (the partition would be typed in an input box).
    cliOptions: () => ({ env: { PATH: "/nonexistent" } }),
  };
}

test("isJobScript: .sbatch/.slurm or an #SBATCH line", () => {
  assert.equal(isJobScript("/a/train.sbatch", ""), true);
  assert.equal(isJobScript("/a/run.SLURM", ""), true);
  assert.equal(isJobScript("/a/job.sh", "#!/bin/bash\n#SBATCH --gres=gpu:1\nsrun x\n"), true);
  assert.equal(isJobScript("/a/job.sh", "#!/bin/bash\n# SBATCH is mentioned here\n"), false);
  assert.equal(isJobScript("/a/train.py", "print('#SBATCH')\n"), false);
});

test("scriptPathFor: the same text reuses the name; other text (an edited script) gets the next free name", () => {
  const dir = tmp();
  assert.deepEqual(scriptPathFor(dir, "train", "A"), { path: path.join(dir, "train.sbatch"), exists: false });
  fs.writeFileSync(path.join(dir, "train.sbatch"), "A");
  assert.deepEqual(scriptPathFor(dir, "train", "A"), { path: path.join(dir, "train.sbatch"), exists: true });
  assert.deepEqual(scriptPathFor(dir, "train", "B"), { path: path.join(dir, "train-2.sbatch"), exists: false });
  fs.writeFileSync(path.join(dir, "train-2.sbatch"), "edited");
  assert.deepEqual(scriptPathFor(dir, "train", "B"), { path: path.join(dir, "train-3.sbatch"), exists: false });
});

// Issue 46 item 4: a committed `train.sbatch -> /dev/zero` took the extension host to 3.4 GB, a
// FIFO blocked it for good, and a dangling link was written through (outside the workspace).
test(
  "scriptPathFor and writeNewScript: a /dev/zero link, a FIFO and a dangling link are passed over, never read or written through",
  { skip: process.platform === "win32" },
  () => {
    const dir = tmp();
    const outside = tmp();
    fs.symlinkSync("/dev/zero", path.join(dir, "train.sbatch"));
    spawnSync("mkfifo", [path.join(dir, "train-2.sbatch")]);
    fs.symlinkSync(path.join(outside, "planted.sbatch"), path.join(dir, "train-3.sbatch"));
    const free = scriptPathFor(dir, "train", "A");
    assert.deepEqual(free, { path: path.join(dir, "train-4.sbatch"), exists: false });
    assert.equal(writeNewScript(free.path, "A"), null);
    assert.equal(fs.readFileSync(free.path, "utf8"), "A");
    // Written where a dangling link stands (put there after the name was chosen): refused.
    assert.match(writeNewScript(path.join(dir, "train-3.sbatch"), "A") ?? "", /appeared meanwhile/);
    assert.deepEqual(fs.readdirSync(outside), [], "nothing written outside through the link");
  },
);

test("Restricted Mode: nothing is written or submitted, and the user is told why", async () => {
  const dir = tmp();
  const file = path.join(dir, "train.py");
  fs.writeFileSync(file, "print(1)\n");
  const doc = new FakeDocument(Uri.file(file));
  workspace.textDocuments.push(doc);
  workspace.isTrusted = false;
  try {
    const h = host(path.join(dir, "scratch"));
    const before = recorded.messages.length;
    assert.equal(await submitCommand(h, new SlurmJobs(h), doc.uri as never, { ask: false, submit: true }), undefined);
    assert.deepEqual(fs.readdirSync(dir), ["train.py"]);
    assert.match(recorded.messages.slice(before).join("\n"), /Restricted Mode/);
  } finally {
    workspace.isTrusted = true;
    workspace.textDocuments.length = 0;
  }
});

test("a Python file: the quick pick changes GPUs per node, the script is written beside it, opened, lint-clean", async () => {
  const dir = tmp();
  const file = path.join(dir, "train.py");
  fs.writeFileSync(file, "print(1)\n");
  const doc = new FakeDocument(Uri.file(file));
  workspace.textDocuments.push(doc);
  try {
    const h = host(path.join(dir, "scratch"));
    recorded.pickAnswers.push("GPUs per node", "$(check) Write the job script");
    recorded.inputAnswers.push("4");
    recorded.answers.push(undefined); // the "Submit" notification dismissed
    const r = await submitCommand(h, new SlurmJobs(h), doc.uri as never);
    assert.deepEqual(r, { script: path.join(dir, "train.sbatch") });
    const text = fs.readFileSync(r.script!, "utf8");
    for (const line of [
      "#SBATCH --gpus-per-node=4",
      "#SBATCH --ntasks-per-node=4",
      "#SBATCH --time=01:00:00",
      `#SBATCH --output=${dir}/slurm-%x-%j.out`,
      `srun python3 ${file}`,
    ])
      assert.ok(text.split("\n").includes(line), `${line}\n${text}`);
    assert.deepEqual(lintManifest(text, "jobscript", { preview: true }).diagnostics, []);
    assert.equal(recorded.shown.at(-1)?.uri, `file://${r.script}`);
    assert.equal(h.refreshed, 0, "nothing submitted");
  } finally {
    workspace.textDocuments.length = 0;
  }
});

test("an untitled Python file: its text and the script go to the scratch folder", async () => {
  const scratch = path.join(tmp(), "scratch");
  const doc = new FakeDocument(Uri.untitled("Untitled-1"));
  doc.text = "print('from an untitled file')\n";
  window.activeTextEditor = { document: doc };
  try {
    const h = host(scratch);
    recorded.answers.push(undefined);
    const r = await submitCommand(h, new SlurmJobs(h), undefined, { ask: false });
    assert.equal(r?.script, path.join(scratch, "Untitled-1.sbatch"));
    assert.equal(fs.readFileSync(path.join(scratch, "Untitled-1.py"), "utf8"), doc.text);
    assert.ok(fs.readFileSync(r!.script!, "utf8").includes(`srun python3 ${path.join(scratch, "Untitled-1.py")}`));
  } finally {
    window.activeTextEditor = undefined;
  }
});

/** A host whose language server answers gpuPilot/runFacts from the same engine, in this process (lsp-runFacts.test.ts checks the real server's). */
function serverHost(scratch: string, answer?: RunFactsResult): SlurmHost & { refreshed: number; asked: string[] } {
  const asked: string[] = [];
  return {
    ...host(scratch),
    asked,
    runFacts: async (uri: { toString(): string }, text: string): Promise<RunFactsResult> => {
      asked.push(uri.toString());
      if (answer) return answer;
      await initEngine();
      return { ok: true, facts: runFacts(text) };
    },
  };
}

/** Writes `text` as `<dir>/<name>`, opens it as a document; returns it. */
function pyDoc(dir: string, name: string, text: string): FakeDocument {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  const doc = new FakeDocument(Uri.file(file));
  doc.text = text;
  workspace.textDocuments.push(doc);
  return doc;
}

const launcherDescription = () =>
  recorded.picks.filter((p) => p.title === "GPU Pilot: Submit to Slurm").at(-1)?.descriptions[5];

test("examples/train_ddp.py (init_process_group from env://), launcher not set: torchrun is the default, and the quick pick says why", async () => {
  const dir = tmp();
  const doc = pyDoc(dir, "train_ddp.py", fs.readFileSync(path.join(ROOT, "examples", "train_ddp.py"), "utf8"));
  settings.clear();
  try {
    const h = serverHost(path.join(dir, "scratch"));
    recorded.pickAnswers.push("GPUs per node", "$(check) Write the job script");
    recorded.inputAnswers.push("2");
    recorded.answers.push(undefined);
    const r = await submitCommand(h, new SlurmJobs(h), doc.uri as never);
    assert.deepEqual(h.asked, [doc.uri.toString()]);
    assert.equal(
      launcherDescription(),
      "torchrun (one task per node) — torchrun: the file calls init_process_group with rank and world size from the environment (env://), line 22",
    );
    const text = fs.readFileSync(r!.script!, "utf8");
    assert.ok(
      text.includes(`srun python3 -m torch.distributed.run --nnodes "$SLURM_NNODES" --nproc_per_node 2 `),
      text,
    );
    assert.ok(text.split("\n").includes("#SBATCH --ntasks-per-node=1"), text);
    assert.ok(!text.includes("SLURM_LOCALID"), text);
    assert.deepEqual(lintManifest(text, "jobscript", { preview: true }).diagnostics, []);
  } finally {
    workspace.textDocuments.length = 0;
  }
});

test("a file that reads LOCAL_RANK without a default: torchrun (API, no quick pick); with a default and no init_process_group: python", async () => {
  const dir = tmp();
  settings.clear();
  try {
    const h = serverHost(path.join(dir, "scratch"));
    const strict = pyDoc(
      dir,
      "strict.py",
      'import os\nlocal_rank = int(os.environ["LOCAL_RANK"])\nprint(local_rank)\n',
    );
    recorded.answers.push(undefined);
    const r1 = await submitCommand(h, new SlurmJobs(h), strict.uri as never, { ask: false });
    assert.ok(fs.readFileSync(r1!.script!, "utf8").includes("python3 -m torch.distributed.run --nnodes"));
    assert.ok(
      recorded.log.some((l) =>
        l.includes(`Submit: launcher torchrun for ${strict.uri.fsPath}: the file reads LOCAL_RANK (line 2)`),
      ),
      recorded.log.join("\n"),
    );
    const lenient = pyDoc(
      dir,
      "lenient.py",
      'import os\nlocal_rank = int(os.environ.get("LOCAL_RANK", "0"))\nprint(local_rank)\n',
    );
    recorded.pickAnswers.push("$(check) Write the job script");
    recorded.answers.push(undefined);
    const r2 = await submitCommand(h, new SlurmJobs(h), lenient.uri as never);
    assert.equal(launcherDescription(), "python (one task per GPU)");
    assert.ok(fs.readFileSync(r2!.script!, "utf8").split("\n").includes(`srun python3 ${lenient.uri.fsPath}`));
  } finally {
    workspace.textDocuments.length = 0;
  }
});

test("gpuPilot.slurm.launcher set by the user: kept even for a torchrun file, and the server is not asked", async () => {
  const dir = tmp();
  const doc = pyDoc(dir, "train_ddp.py", fs.readFileSync(path.join(ROOT, "examples", "train_ddp.py"), "utf8"));
  settings.clear();
  settings.set("launcher", "python");
  try {
    const h = serverHost(path.join(dir, "scratch"));
    recorded.answers.push(undefined);
    const r = await submitCommand(h, new SlurmJobs(h), doc.uri as never, { ask: false });
    assert.deepEqual(h.asked, []);
    assert.ok(fs.readFileSync(r!.script!, "utf8").split("\n").includes(`srun python3 ${doc.uri.fsPath}`));
  } finally {
    settings.clear();
    workspace.textDocuments.length = 0;
  }
});

test("the server cannot answer: the setting's default (python) silently, one log line", async () => {
  const dir = tmp();
  const doc = pyDoc(dir, "train_ddp.py", fs.readFileSync(path.join(ROOT, "examples", "train_ddp.py"), "utf8"));
  settings.clear();
  try {
    const h = serverHost(path.join(dir, "scratch"), {
      ok: false,
      error: "the GPU Pilot language server is not running (see GPU Pilot: Show Output)",
    });
    const before = recorded.messages.length;
    recorded.pickAnswers.push("$(check) Write the job script");
    recorded.answers.push(undefined);
    const r = await submitCommand(h, new SlurmJobs(h), doc.uri as never);
    assert.equal(launcherDescription(), "python (one task per GPU)");
    assert.ok(fs.readFileSync(r!.script!, "utf8").split("\n").includes(`srun python3 ${doc.uri.fsPath}`));
    assert.ok(
      recorded.log.some((l) =>
        l.includes(
          `Submit: could not tell whether ${doc.uri.fsPath} needs torchrun (the GPU Pilot language server is not running (see GPU Pilot: Show Output)); the launcher setting's default (python) is used.`,
        ),
      ),
      recorded.log.join("\n"),
    );
    // Only the "Job script written" notification: no warning about the server.
    assert.deepEqual(
      recorded.messages.slice(before).filter((m) => !m.startsWith("Job script written")),
      [],
    );
  } finally {
    workspace.textDocuments.length = 0;
  }
});

test("the partition quick pick shows the Slurm view's rows: free GPUs, nodes, types, the default marked", async () => {
  const dir = tmp();
  const doc = pyDoc(dir, "train.py", "print(1)\n");
  settings.clear();
  try {
    const h: SlurmHost = {
      ...host(path.join(dir, "scratch")),
      cliOptions: () => ({
        env: { PATH: `${path.join(ROOT, "test", "fixtures", "bin")}:${process.env.PATH}`, FAKE_SINFO_MODE: "typed" },
      }),
    };
    recorded.pickAnswers.push("Partition", "gpu (default)", "$(check) Write the job script");
    recorded.answers.push(undefined);
    const r = await submitCommand(h, new SlurmJobs(h), doc.uri as never);
    const pick = recorded.picks.find((p) => p.title === "Partition");
    assert.deepEqual(pick && pick.labels.map((l, i) => `${l} | ${pick.descriptions[i] ?? ""}`), [
      "(cluster's default) | no --partition line: Slurm chooses",
      "gpu (default) | 2 of 4 GPUs free · 1 node · a100",
    ]);
    assert.ok(fs.readFileSync(r!.script!, "utf8").split("\n").includes("#SBATCH --partition=gpu"));
  } finally {
    workspace.textDocuments.length = 0;
  }
});
