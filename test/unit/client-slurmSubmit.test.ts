/**
 * The submit command's glue (client/src/slurm/submit.ts) with the stand-in vscode module: refused in
 * Restricted Mode (nothing written), the quick pick changes a value, an untitled file and its script
 * go to the scratch folder, an edited script is never overwritten, job scripts are told apart.
 */
import { FakeDocument, recorded, Uri, window, workspace } from "./client-fakeVscode";
import assert from "node:assert/strict";
import { after, test } from "node:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { isJobScript, scriptPathFor, SlurmJobs, submitCommand, type SlurmHost } from "../../client/src/slurm/submit";
import { lintManifest } from "../../server/src/engine/manifests/lintManifest";

const made: string[] = [];
after(() => { for (const d of made) fs.rmSync(d, { recursive: true, force: true }); });
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "gp-slurm-submit-"));
  made.push(d);
  return d;
}

function host(scratch: string): SlurmHost & { refreshed: number } {
  return {
    scratchFolder: scratch,
    refreshed: 0,
    refreshView() { this.refreshed++; },
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
  assert.equal(scriptPathFor(dir, "train", "A"), path.join(dir, "train.sbatch"));
  fs.writeFileSync(path.join(dir, "train.sbatch"), "A");
  assert.equal(scriptPathFor(dir, "train", "A"), path.join(dir, "train.sbatch"));
  assert.equal(scriptPathFor(dir, "train", "B"), path.join(dir, "train-2.sbatch"));
  fs.writeFileSync(path.join(dir, "train-2.sbatch"), "edited");
  assert.equal(scriptPathFor(dir, "train", "B"), path.join(dir, "train-3.sbatch"));
});

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
    for (const line of ["#SBATCH --gpus-per-node=4", "#SBATCH --ntasks-per-node=4", "#SBATCH --time=01:00:00", `#SBATCH --output=${dir}/slurm-%x-%j.out`, `srun python3 ${file}`]) assert.ok(text.split("\n").includes(line), `${line}\n${text}`);
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
