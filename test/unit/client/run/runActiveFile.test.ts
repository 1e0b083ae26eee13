// "Run Active File on Selected GPUs" / "Run Active File With..." with a stand-in `vscode` module
// (client-fakeVscode.ts, imported first): the Task it builds for each launcher (a CustomExecution
// whose pseudoterminal runs the program: nothing in a file name or setting is resolved by VS Code),
// the checks and their ways forward, workspace trust, saving, picking GPUs, Show Output / Stop, and
// the exit report, with real processes where a run is started.
import {
  commands,
  CustomExecution,
  FakeDocument,
  recorded,
  settings,
  TaskScope,
  tasks,
  Uri,
  window,
  workspace,
  memento,
} from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LastRun } from "../../../../client/src/api";
import { GpuMonitor } from "../../../../client/src/gpu/monitor";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import type { ProcessOwner } from "../../../../client/src/run/owners";
import type { ProcessTerminal, ProcessTerminalOptions } from "../../../../client/src/run/processTerminal";
import { initEngine } from "../../../../server/src/engine/lint";
import { runFacts } from "../../../../server/src/engine/runFacts";
import type { RunFactsResult } from "../../../../common/src/lsp/protocol";
import {
  ARGS_STATE_KEY,
  checkRunFor,
  runActiveFile,
  runActiveFileWith,
  type RunHost,
} from "../../../../client/src/run/runActiveFile";
import { ROOT } from "../../support/root";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const LAUNCHERS_BIN = join(ROOT, "test", "fixtures", "bin", "launchers");
const CASES = join(ROOT, "test", "cases");
/** The workspace folder: real, since the planner refuses a script that is not a file on disk ({@link open} writes each one). */
const PROJECT = realpathSync(mkdtempSync(join(tmpdir(), "gpu-pilot-proj-")));
/** Where a file outside the workspace lives. */
const SCRATCH = realpathSync(mkdtempSync(join(tmpdir(), "gpu-pilot-scratch-")));
/**
 * A stand-in `python3` (never started here) last on PATH, so the planner finds the interpreter on
 * a machine without Python; a real python3 earlier on PATH comes first.
 */
const PYTHON_BIN = realpathSync(mkdtempSync(join(tmpdir(), "gpu-pilot-python-")));
writeFileSync(join(PYTHON_BIN, "python3"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
const PATH_BEFORE = process.env.PATH;
process.env.PATH = `${PATH_BEFORE}:${PYTHON_BIN}`;
test.after(() => {
  process.env.PATH = PATH_BEFORE;
  for (const d of [PROJECT, SCRATCH, PYTHON_BIN]) rmSync(d, { recursive: true, force: true });
});

type TestHost = RunHost & {
  runFacts: NonNullable<RunHost["runFacts"]>;
  lastRun?: LastRun;
  dispose(): void;
  state: ReturnType<typeof memento>;
};

async function host(selection: string[] = [], ownerOf: (pid: number) => ProcessOwner = () => "me"): Promise<TestHost> {
  process.env.FAKE_NVIDIA_SMI_MODE = "busy";
  settings.clear();
  settings.set("nvidiaSmiPath", FAKE);
  recorded.messages.length = 0;
  recorded.progress.length = 0;
  recorded.answers.length = 0;
  recorded.quickPicks.length = 0;
  recorded.quickPickAnswer = undefined;
  recorded.pickAnswers.length = 0;
  recorded.inputAnswers.length = 0;
  recorded.picks.length = 0;
  recorded.inputs.length = 0;
  recorded.shown.length = 0;
  recorded.executed.length = 0;
  recorded.log.length = 0;
  tasks.executed.length = 0;
  tasks.terminated.length = 0;
  workspace.isTrusted = true;
  workspace.folder = { uri: Uri.file(PROJECT), name: "proj", index: 0 };
  workspace.saveAsTarget = undefined;
  const monitor = new GpuMonitor();
  await monitor.refresh();
  const state = memento();
  const store = new SelectionStore(state);
  await store.set(selection);
  const h: TestHost = {
    monitor,
    selection: store,
    subscriptions: [] as { dispose(): void }[],
    workspaceState: state,
    state,
    ownerOf,
    // The language server's answer to gpuPilot/runFacts, from the same engine in this process
    // (test/unit/server/handlers/lsp-runFacts.test.ts checks the real server's).
    runFacts: async (_uri: unknown, text: string): Promise<RunFactsResult> => {
      await initEngine();
      return { ok: true, facts: runFacts(text) };
    },
    lastRun: undefined as LastRun | undefined,
    setLastRun(run: LastRun) {
      h.lastRun = run;
    },
    dispose: () => monitor.dispose(),
  };
  return h;
}

/** Makes `doc` the active editor's, with `text`; a file's text is written to disk too (the run reads it from there). */
function open(doc: FakeDocument, text = ""): FakeDocument {
  doc.text = text;
  onDisk(doc);
  workspace.textDocuments = [doc];
  window.activeTextEditor = { document: doc };
  return doc;
}

/** Writes a file document's text to disk, unless the file is there. */
function onDisk(doc: FakeDocument): void {
  if (doc.uri.scheme !== "file" || existsSync(doc.uri.fsPath)) return;
  mkdirSync(dirname(doc.uri.fsPath), { recursive: true });
  writeFileSync(doc.uri.fsPath, doc.text);
}

/** The text of a rule case (test/cases/<name>). */
function ruleCase(name: string): string {
  const file = join(CASES, name);
  assert.ok(existsSync(file), `missing rule case ${file}`);
  return readFileSync(file, "utf8");
}

/** The stand-in launchers first on the run's PATH (gpuPilot.run.env), as the e2e suite does. */
function standInsOnPath(): void {
  settings.set("run.env", { PATH: `${LAUNCHERS_BIN}:\${env:PATH}` });
}

const expectedEnv = (gpus: string) => ({ CUDA_VISIBLE_DEVICES: gpus, CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
/** The titles of the progress notifications that are still open ("Running …"). */
const openProgress = () => recorded.progress.filter((p) => p.open).map((p) => p.title);

/** What task `i`'s CustomExecution runs: its pseudoterminal's options (the program is not started). */
async function launched(i = 0): Promise<ProcessTerminalOptions> {
  const task = tasks.executed[i];
  assert.ok(task.execution instanceof CustomExecution, `${task.name}: a CustomExecution`);
  return ((await task.execution.callback(task.definition)) as unknown as ProcessTerminal).options;
}
/** The CUDA variables of a run's whole environment (null: absent). */
const cuda = (env: Readonly<Record<string, string>>) => ({
  CUDA_VISIBLE_DEVICES: env.CUDA_VISIBLE_DEVICES ?? null,
  CUDA_DEVICE_ORDER: env.CUDA_DEVICE_ORDER ?? null,
});
const settle = () => new Promise((r) => setImmediate(r));

test("runs the active file as a Task with a CustomExecution, a running notification that can stop it", async () => {
  const h = await host(["1"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 1);
  const task = tasks.executed[0];
  assert.deepEqual(
    { ...task.definition, runId: "" },
    { type: "gpuPilot", runId: "", file: `file://${PROJECT}/train.py`, gpus: "1", launcher: "python" },
  );
  assert.equal(task.name, "train.py on GPU 1");
  assert.equal(task.source, "GPU Pilot");
  assert.equal(task.scope, workspace.folder, "scoped to the workspace folder");
  const run = await launched();
  assert.equal(run.command, "python3", "no Python extension: python3");
  assert.deepEqual(run.args, [`${PROJECT}/train.py`]);
  assert.equal(run.cwd, PROJECT);
  assert.deepEqual(cuda(run.env), expectedEnv("1"));
  assert.equal(run.env.PYTHONUNBUFFERED, "1", "output through a pipe: Python unbuffered");
  assert.equal(run.env.PATH, process.env.PATH, "the extension host's environment is inherited");
  assert.ok(
    recorded.log.some((l) => /Python extension \(ms-python\.python\) is not installed: running with python3/.test(l)),
  );
  assert.deepEqual(recorded.messages, [], "no plain message: the running notification is a progress notification");
  assert.deepEqual(openProgress(), ["Running train.py on GPU 1"]);

  assert.equal(h.lastRun?.file, `${PROJECT}/train.py`);
  assert.equal(h.lastRun?.launcher, "python");
  assert.deepEqual(h.lastRun?.unset, []);
  assert.equal(h.lastRun?.exitCode, undefined);
  // The GPUs it was given (the History panel marks the run on their charts only): GPU 1's UUID.
  const gpu1 = h.monitor.inventory?.gpus.find((g) => g.index === 1)?.uuid;
  assert.ok(gpu1);
  assert.deepEqual(h.lastRun?.gpus, [gpu1.toLowerCase()]);
  assert.equal(h.subscriptions.length, 0, "no task listeners: the pseudoterminal reports the run");
  h.dispose();
});

/** A real folder with `files` (name → text) as the workspace folder; returns its path. */
function realProject(files: Record<string, string>, name = "proj"): string {
  const dir = join(mkdtempSync(join(tmpdir(), "gpu-pilot-run-")), name);
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  workspace.folder = { uri: Uri.file(dir), name, index: 0 };
  return dir;
}

/** Waits until the run record says the program ended. */
async function ended(h: TestHost): Promise<LastRun> {
  const t0 = Date.now();
  while (h.lastRun?.endedAt === undefined) {
    if (Date.now() - t0 > 15_000) throw new Error(`the run did not end: ${JSON.stringify(h.lastRun)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return h.lastRun;
}

test("the program really runs in the task's terminal: pid, output with \\r\\n, exit code 0 and a failure reported", async () => {
  const h = await host(["0", "1"]);
  const dir = realProject({ "train.py": "" });
  settings.set("run.launcher", "custom");
  settings.set("run.customArgs", [
    process.execPath,
    "-e",
    "process.stdout.write('gpus=' + process.env.CUDA_VISIBLE_DEVICES + '\\n'); process.exitCode = Number(process.argv[2])",
    "${file}",
  ]);
  settings.set("run.args", ["0"]);
  open(new FakeDocument(Uri.file(join(dir, "train.py"))));
  await runActiveFile(h);
  const term = await tasks.open(tasks.executed[0]);
  const run = await ended(h);
  assert.equal(await term.closed, 0);
  assert.equal(term.output(), "gpus=0,1\r\n");
  assert.equal(run.exitCode, 0);
  assert.ok(typeof run.pid === "number" && run.pid > 0, `pid ${run.pid}`);
  await settle();
  assert.deepEqual(recorded.messages, ["train.py on GPU 0,1 (custom): finished (exit code 0)."]);
  assert.deepEqual(
    recorded.progress.map((p) => [p.title, p.open]),
    [["Running train.py on GPU 0,1 (custom)", false]],
    "the running notification closed when the run ended: replaced, not stacked",
  );
  assert.ok(
    recorded.log.some((l) => l.includes(`(pid ${run.pid}) in ${JSON.stringify(dir)}`)),
    recorded.log.join("\n"),
  );

  settings.set("run.args", ["3"]);
  recorded.messages.length = 0;
  await runActiveFile(h);
  const failed = await tasks.open(tasks.executed[1]);
  assert.equal(await failed.closed, 3);
  assert.equal((await ended(h)).exitCode, 3);
  await settle();
  assert.deepEqual(recorded.messages, ["train.py on GPU 0,1 (custom): failed with exit code 3."]);
  assert.deepEqual(openProgress(), [], 'no stale "Running … [Cancel]" beside the failure');
  h.dispose();
});

test(
  "Cancel on the running notification terminates the task: the program gets SIGTERM, the run says so",
  { skip: process.platform === "win32" },
  async () => {
    const h = await host(["0"]);
    const dir = realProject({ "train.py": "" });
    settings.set("run.launcher", "custom");
    settings.set("run.customArgs", [process.execPath, "-e", "setInterval(() => {}, 1000)"]);
    open(new FakeDocument(Uri.file(join(dir, "train.py"))));
    await runActiveFile(h);
    const term = await tasks.open(tasks.executed[0]);
    while (h.lastRun?.pid === undefined) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(openProgress(), ["Running train.py on GPU 0 (custom)"]);
    recorded.progress[0].cancel();
    assert.equal(await term.closed, 143);
    const run = await ended(h);
    assert.deepEqual(tasks.terminated, [tasks.executed[0]]);
    assert.equal(run.exitCode, null);
    assert.equal(run.signal, "SIGTERM");
    await settle();
    assert.equal(recorded.messages.at(-1), "train.py on GPU 0 (custom): stopped by SIGTERM.");
    assert.deepEqual(openProgress(), [], "the running notification closed");
    h.dispose();
  },
);

test("files named ${env:HOME}.py and x_${command:…}.py in a folder named ${workspaceFolder}: argv, cwd and env byte for byte, no command run", async () => {
  const h = await host(["0", "1"]);
  const record = join(mkdtempSync(join(tmpdir(), "gpu-pilot-rec-")), "rec.json");
  const marker = "gpuPilot.test.marker";
  let markerRan = 0;
  const reg = commands.registerCommand(marker, () => ++markerRan);
  const names = ["${env:HOME}.py", `x_\${command:${marker}}.py`, "${config:editor.fontSize}.py"];
  const dir = realProject(Object.fromEntries(names.map((n) => [n, ""])), "${workspaceFolder}");
  settings.set("run.env", {
    PATH: `${LAUNCHERS_BIN}:\${env:PATH}`,
    GPU_PILOT_LAUNCH_RECORD: record,
    LITERAL: "${config:x} ${workspaceFolder} ${command:" + marker + "}",
    HOME_COPY: "${env:HOME}",
  });
  settings.set("run.launcher", "torchrun");
  settings.set("run.args", ["${env:HOME}", "${command:" + marker + "}"]);
  for (const name of names) {
    const file = join(dir, name);
    open(new FakeDocument(Uri.file(file)));
    tasks.executed.length = 0;
    await runActiveFile(h);
    // VS Code resolves ${...} in a CustomExecution task's definition: none may be there.
    assert.ok(
      !JSON.stringify(tasks.executed[0].definition).includes("${"),
      JSON.stringify(tasks.executed[0].definition),
    );
    assert.equal(fileURLToPath(String(tasks.executed[0].definition.file)), file);
    const opts = await launched();
    assert.equal(opts.cwd, dir);
    assert.equal(
      opts.env.LITERAL,
      "${config:x} ${workspaceFolder} ${command:" + marker + "}",
      "only ${env:NAME} is expanded in gpuPilot.run.env",
    );
    assert.equal(opts.env.HOME_COPY, process.env.HOME ?? "", "${env:NAME} is (the documented form)");
    await tasks.open(tasks.executed[0]);
    const run = await ended(h);
    assert.equal(run.exitCode, 0, JSON.stringify(run));
    const got = JSON.parse(readFileSync(record, "utf8")) as { argv: string[]; cwd: string; env: unknown };
    assert.deepEqual(
      got.argv,
      ["--standalone", "--nproc_per_node=2", file, "${env:HOME}", "${command:" + marker + "}"],
      name,
    );
    assert.equal(got.cwd, dir, name);
    assert.deepEqual(got.env, expectedEnv("0,1"));
    assert.equal(h.lastRun?.title, `${name} on GPU 0,1 (torchrun)`);
  }
  assert.equal(markerRan, 0, "the marker command never ran");
  reg.dispose();
  h.dispose();
});

test("untrusted workspace: no task, a clear message, and a way to trust it", async () => {
  const h = await host(["0"]);
  workspace.isTrusted = false;
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  recorded.answers.push("Manage Workspace Trust");
  await runActiveFile(h);
  await runActiveFileWith(h);
  await new Promise((r) => setImmediate(r));
  assert.equal(tasks.executed.length, 0);
  assert.equal(recorded.picks.length, 0, "Run With... does not even offer launchers");
  assert.equal(recorded.messages.length, 2);
  assert.match(recorded.messages[0], /does not run files in Restricted Mode.*Trust this workspace/);
  assert.deepEqual(recorded.executed, ["workbench.trust.manage"]);
  assert.ok(recorded.log.some((l) => /workspace is not trusted/.test(l)));
  workspace.isTrusted = true;
  h.dispose();
});

test("each launcher from gpuPilot.run.launcher, with the stand-ins first on the run's PATH", async () => {
  const h = await host(["0", "1"]);
  standInsOnPath();
  settings.set("run.dockerImage", "pytorch/pytorch:latest");
  settings.set("run.customArgs", ["${python}", "-u", "${file}", "--gpus", "${gpus}", "--n=${count}"]);
  settings.set("run.args", ["--epochs", "1"]);
  const file = `${PROJECT}/train.py`;
  open(new FakeDocument(Uri.file(file)));
  const bin = (n: string) => join(LAUNCHERS_BIN, n);
  // deepspeed, docker and srun never see CUDA_VISIBLE_DEVICES, even one the extension host inherited;
  // CUDA_DEVICE_ORDER only where their own launch sets it.
  const saved = { v: process.env.CUDA_VISIBLE_DEVICES, o: process.env.CUDA_DEVICE_ORDER };
  process.env.CUDA_VISIBLE_DEVICES = "7";
  process.env.CUDA_DEVICE_ORDER = "FASTEST_FIRST";
  const none = { CUDA_VISIBLE_DEVICES: null, CUDA_DEVICE_ORDER: null };
  const order = { CUDA_VISIBLE_DEVICES: null, CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
  const expected: Record<
    string,
    { command: string; args: string[]; env: Record<string, string | null>; added: Record<string, string> }
  > = {
    python: { command: "python3", args: [file, "--epochs", "1"], env: expectedEnv("0,1"), added: expectedEnv("0,1") },
    torchrun: {
      command: bin("torchrun"),
      args: ["--standalone", "--nproc_per_node=2", file, "--epochs", "1"],
      env: expectedEnv("0,1"),
      added: expectedEnv("0,1"),
    },
    accelerate: {
      command: bin("accelerate"),
      args: ["launch", "--num_processes=2", "--gpu_ids=0,1", file, "--epochs", "1"],
      env: expectedEnv("0,1"),
      added: expectedEnv("0,1"),
    },
    deepspeed: {
      command: bin("deepspeed"),
      args: ["--include", "localhost:0,1", file, "--epochs", "1"],
      env: order,
      added: { CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
    },
    custom: {
      command: "python3",
      args: ["-u", file, "--gpus", "0,1", "--n=2", "--epochs", "1"],
      env: expectedEnv("0,1"),
      added: expectedEnv("0,1"),
    },
    docker: {
      command: bin("docker"),
      args: [
        "run",
        "--rm",
        "--gpus",
        '"device=0,1"',
        "-v",
        `${PROJECT}:${PROJECT}`,
        "-w",
        PROJECT,
        "pytorch/pytorch:latest",
        "python",
        file,
        "--epochs",
        "1",
      ],
      env: none,
      added: {},
    },
    slurm: {
      command: bin("srun"),
      args: ["--gpus=2", "python3", file, "--epochs", "1"],
      env: order,
      added: { CUDA_DEVICE_ORDER: "PCI_BUS_ID" },
    },
  };
  try {
    for (const [launcher, want] of Object.entries(expected)) {
      settings.set("run.launcher", launcher);
      tasks.executed.length = 0;
      await runActiveFile(h);
      assert.equal(tasks.executed.length, 1, launcher);
      const run = await launched();
      assert.equal(run.command, want.command, launcher);
      assert.deepEqual(run.args, want.args, launcher);
      assert.ok(run.env.PATH?.startsWith(`${LAUNCHERS_BIN}:`), `${launcher}: the run's PATH starts with the stand-ins`);
      assert.deepEqual(cuda(run.env), want.env, launcher);
      const { PATH, ...added } = h.lastRun!.env;
      assert.ok(PATH);
      assert.deepEqual(added, want.added, `${launcher}: the run record's added variables`);
      assert.deepEqual(
        h.lastRun!.unset,
        want.env === none || want.env === order ? ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"] : [],
        launcher,
      );
      assert.equal(tasks.executed[0].definition.launcher, launcher);
    }
  } finally {
    for (const [k, v] of [
      ["CUDA_VISIBLE_DEVICES", saved.v],
      ["CUDA_DEVICE_ORDER", saved.o],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  h.dispose();
});

test("torchrun / accelerate / deepspeed not found: python -m fallback (logged); docker not found: an error", async () => {
  const h = await host(["1"]);
  settings.set("run.env", { PATH: PYTHON_BIN });
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  settings.set("run.launcher", "torchrun");
  await runActiveFile(h);
  assert.equal((await launched(0)).command, "python3");
  assert.deepEqual((await launched(0)).args, [
    "-m",
    "torch.distributed.run",
    "--standalone",
    "--nproc_per_node=1",
    `${PROJECT}/train.py`,
  ]);
  assert.ok(
    recorded.log.some((l) =>
      /torchrun was not found on PATH or next to python3: running python3 -m torch\.distributed\.run/.test(l),
    ),
  );
  settings.set("run.launcher", "docker");
  settings.set("run.dockerImage", "img");
  recorded.messages.length = 0;
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 1);
  assert.deepEqual(recorded.messages, [
    "GPU Pilot: docker was not found on PATH (gpuPilot.run.env's PATH): install it or choose another launcher.",
  ]);
  h.dispose();
});

test("ddp_ok.py (reads LOCAL_RANK) with python: torchrun is suggested; accepting runs torchrun", async () => {
  const h = await host(["0", "1"]);
  standInsOnPath();
  const file = `${PROJECT}/ddp_ok.py`;
  open(new FakeDocument(Uri.file(file)), ruleCase("ddp_ok.py"));
  recorded.answers.push(undefined);
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0, "dismissed: nothing runs");
  assert.match(
    recorded.messages[0],
    /^ddp_ok\.py reads LOCAL_RANK \(line 7: os\.environ\["LOCAL_RANK"\]\).*raises KeyError\. Run it with torchrun \(--nproc_per_node=2/,
  );

  recorded.answers.push("Run with torchrun");
  await runActiveFile(h);
  assert.equal((await launched(0)).command, join(LAUNCHERS_BIN, "torchrun"));
  assert.deepEqual((await launched(0)).args, ["--standalone", "--nproc_per_node=2", file]);

  recorded.answers.push("Run with python");
  await runActiveFile(h);
  assert.equal((await launched(1)).command, "python3");

  settings.set("run.launcher", "torchrun");
  recorded.messages.length = 0;
  await runActiveFile(h);
  assert.deepEqual(recorded.messages, [], "no question with torchrun");
  assert.deepEqual(openProgress().at(-1), "Running ddp_ok.py on GPU 0,1 (torchrun)");
  h.dispose();
});

test("a script that sets CUDA_VISIBLE_DEVICES itself before CUDA initialises (renumbering_ok.py): both values shown; Show the Line / Run Anyway", async () => {
  const h = await host(["0", "1"]);
  const file = `${PROJECT}/early.py`;
  open(new FakeDocument(Uri.file(file)), ruleCase("renumbering_ok.py"));
  recorded.answers.push("Show the Line");
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.equal(
    recorded.messages[0],
    'early.py sets CUDA_VISIBLE_DEVICES itself to "3" (line 4), which replaces the selection "0,1" that GPU Pilot passes. Run it anyway?',
  );
  assert.deepEqual(recorded.shown, [{ uri: `file://${file}`, line: 3 }]);
  recorded.answers.push("Run Anyway");
  await runActiveFile(h);
  assert.deepEqual(cuda((await launched(0)).env), expectedEnv("0,1"));
  h.dispose();
});

test("the language server's verdict: a CUDA_VISIBLE_DEVICES write GPU001 finds ineffective (env_after_is_available.py line 6) replaces nothing: no question", async () => {
  const h = await host(["0", "1"]);
  const file = `${PROJECT}/late.py`;
  open(new FakeDocument(Uri.file(file)), ruleCase("env_after_is_available.py"));
  const asked: string[] = [];
  const server = h.runFacts;
  const withVerdict: RunHost = { ...h, runFacts: (uri, text) => (asked.push(uri.toString()), server(uri, text)) };
  assert.deepEqual(
    (await checkRunFor(withVerdict, Uri.file(file) as never)).map((f) => f.kind),
    [],
    "no overridesSelection",
  );
  assert.deepEqual(asked, [`file://${file}`]);
  recorded.messages.length = 0;
  await runActiveFile(h);
  assert.deepEqual(recorded.messages, [], "nothing asked");
  assert.deepEqual(cuda((await launched(0)).env), expectedEnv("0,1"));
  h.dispose();
});

test("the language server cannot say (not running, an error, a rejection): the run goes on without those checks, and a warning says why", async () => {
  for (const [what, runFacts] of [
    [
      "not running",
      () =>
        Promise.resolve<RunFactsResult>({
          ok: false,
          error: "the GPU Pilot language server is not running (see GPU Pilot: Show Output)",
        }),
    ],
    ["rejects", () => Promise.reject(new Error("connection got disposed"))],
  ] as const) {
    const h = await host(["0", "1"]);
    const file = `${PROJECT}/ddp.py`;
    open(new FakeDocument(Uri.file(file)), ruleCase("ddp_ok.py"));
    const down = { ...h, runFacts };
    assert.deepEqual(
      (await checkRunFor(down, Uri.file(file) as never)).map((f) => f.kind),
      [],
      `${what}: no launcher check (API: logged only)`,
    );
    assert.deepEqual(recorded.messages, [], `${what}: the API asks and shows nothing`);
    await runActiveFile(down);
    assert.equal(recorded.messages.length, 1, `${what}: ${JSON.stringify(recorded.messages)}`);
    const reason =
      what === "not running"
        ? "the GPU Pilot language server is not running \\(see GPU Pilot: Show Output\\)"
        : "connection got disposed";
    assert.match(
      recorded.messages[0],
      new RegExp(
        `^GPU Pilot could not check ddp\\.py before the run \\(${reason}\\); it runs without the distributed-launcher and CUDA_VISIBLE_DEVICES checks\\.$`,
      ),
    );
    assert.equal((await launched(0)).command, "python3", `${what}: it ran with python`);
    assert.deepEqual(cuda((await launched(0)).env), expectedEnv("0,1"));
    h.dispose();
  }
});

test("more processes than GPUs: one per GPU or as set; GPUs busy with other users' processes: a warning that does not block", async () => {
  const h = await host(["0"], (pid) => (pid === 582 ? "other" : "me"));
  standInsOnPath();
  settings.set("run.launcher", "torchrun");
  settings.set("run.nproc", 3);
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  recorded.answers.push("Use 1 Process");
  await runActiveFile(h);
  assert.match(recorded.messages[0], /asks for 3 processes on 1 selected GPU/);
  assert.match(recorded.messages[1], /^GPU Pilot: GPU 0 runs 1 process of another user \(pid 582 python3, 3\.3 GiB\)/);
  assert.deepEqual((await launched(0)).args, ["--standalone", "--nproc_per_node=1", `${PROJECT}/train.py`]);
  recorded.answers.push("Run Anyway");
  await runActiveFile(h);
  assert.deepEqual((await launched(1)).args, ["--standalone", "--nproc_per_node=3", `${PROJECT}/train.py`]);
  h.dispose();
});

test("Run Active File With...: a launcher from the list, arguments asked and remembered per file", async () => {
  const h = await host(["1"]);
  standInsOnPath();
  const file = `${PROJECT}/train.py`;
  open(new FakeDocument(Uri.file(file)));
  recorded.pickAnswers.push("accelerate");
  recorded.inputAnswers.push(`--name 'my run' --lr=1e-4`);
  await runActiveFileWith(h);
  assert.deepEqual(recorded.picks[0].labels, [
    "python",
    "torchrun",
    "accelerate",
    "deepspeed",
    "custom",
    "docker",
    "slurm",
  ]);
  assert.deepEqual(recorded.inputs[0].value, "");
  assert.deepEqual((await launched(0)).args, [
    "launch",
    "--num_processes=1",
    "--gpu_ids=1",
    file,
    "--name",
    "my run",
    "--lr=1e-4",
  ]);
  assert.deepEqual(h.state.data.get(ARGS_STATE_KEY), { [file]: "--name 'my run' --lr=1e-4" });

  // The plain command reuses the remembered arguments after gpuPilot.run.args.
  settings.set("run.args", ["--fast"]);
  await runActiveFile(h);
  assert.deepEqual((await launched(1)).args, [file, "--fast", "--name", "my run", "--lr=1e-4"]);

  // Next time the prompt proposes them; cancelling the pick or the prompt runs nothing.
  recorded.pickAnswers.push("python");
  recorded.inputAnswers.push(undefined);
  await runActiveFileWith(h);
  assert.equal(recorded.inputs[1].value, "--name 'my run' --lr=1e-4");
  recorded.pickAnswers.push(undefined);
  await runActiveFileWith(h);
  assert.equal(tasks.executed.length, 2);

  recorded.pickAnswers.push("python");
  recorded.inputAnswers.push("'unterminated");
  recorded.messages.length = 0;
  await runActiveFileWith(h);
  assert.equal(tasks.executed.length, 2);
  assert.deepEqual(recorded.messages, ["GPU Pilot: Unterminated ' in the arguments: 'unterminated"]);
  h.dispose();
});

test("slurm with nothing selected asks how many GPUs srun should get", async () => {
  const h = await host([]);
  standInsOnPath();
  settings.set("run.launcher", "slurm");
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  recorded.inputAnswers.push("4");
  await runActiveFile(h);
  assert.equal(recorded.quickPicks.length, 0, "no GPU pick for srun");
  assert.equal((await launched(0)).command, join(LAUNCHERS_BIN, "srun"));
  assert.deepEqual((await launched(0)).args, ["--gpus=4", "python3", `${PROJECT}/train.py`]);
  assert.equal(tasks.executed[0].name, "train.py via srun (4 GPUs)");
  h.dispose();
});

test("checkRun (the API): findings without asking or running", async () => {
  const h = await host(["0", "1"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/ddp.py`)), ruleCase("ddp_ok.py"));
  assert.deepEqual(
    (await checkRunFor(h)).map((f) => f.kind),
    ["needsDistributedLauncher"],
  );
  assert.deepEqual(await checkRunFor(h, undefined, "torchrun"), []);
  assert.equal(tasks.executed.length, 0);
  assert.deepEqual(recorded.messages, []);
  h.dispose();
});

test("a dirty file is saved first; a file outside the workspace runs in its own folder", async () => {
  const h = await host(["0"]);
  const doc = open(new FakeDocument(Uri.file(`${SCRATCH}/try.py`), "python", true));
  await runActiveFile(h);
  assert.equal(doc.saves, 1);
  const task = tasks.executed[0];
  assert.equal(task.scope, TaskScope.Workspace);
  assert.equal((await launched(0)).cwd, SCRATCH);
  h.dispose();
});

test("untitled: declining the save offer stops; cancelling Save As stops; saving runs the saved file", async () => {
  const h = await host(["1"]);
  open(new FakeDocument(Uri.untitled("Untitled-1")));
  recorded.answers.push(undefined);
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.match(recorded.messages[0], /Save this untitled Python file/);

  recorded.answers.push("Save As...");
  workspace.saveAsTarget = undefined;
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0, "Save As dialog cancelled");

  recorded.answers.push("Save As...");
  workspace.saveAsTarget = `${PROJECT}/new.py`;
  writeFileSync(workspace.saveAsTarget, ""); // what the Save As wrote
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 1);
  assert.deepEqual((await launched(0)).args, [`${PROJECT}/new.py`]);
  h.dispose();
});

test("nothing ticked: the GPU quick pick asks; the pick is kept; cancel does nothing", async () => {
  const h = await host([]);
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  recorded.quickPickAnswer = undefined;
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.deepEqual(recorded.quickPicks[0].labels, ["GPU 0: NVIDIA H200", "GPU 1: NVIDIA H200"]);
  assert.deepEqual(recorded.quickPicks[0].preselected, []);
  // Short detail lines (the quick pick is 600 px wide): free memory as the tree writes it, who runs there; no UUID or bus ID.
  assert.deepEqual(recorded.quickPicks[0].details, ["139.8 GiB free · 1 process (user unknown)", "139.8 GiB free"]);

  recorded.quickPickAnswer = ["GPU 1: NVIDIA H200"];
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 1);
  assert.deepEqual(cuda((await launched(0)).env), expectedEnv("1"));
  assert.deepEqual(h.selection.get(), ["1"]);
  h.dispose();
});

test("a selection naming a GPU that is not there asks first", async () => {
  const h = await host(["3"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/train.py`)));
  recorded.answers.push(undefined);
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.match(recorded.messages[0], /names 3, which nvidia-smi does not list \(GPUs here: 0, 1\)/);
  recorded.answers.push("Run Anyway");
  await runActiveFile(h);
  assert.deepEqual(cuda((await launched(0)).env), expectedEnv("3"));
  recorded.answers.push("Choose GPUs");
  recorded.quickPickAnswer = ["GPU 0: NVIDIA H200"];
  await runActiveFile(h);
  assert.deepEqual(cuda((await launched(1)).env), expectedEnv("0"));
  assert.deepEqual(h.selection.get(), ["0"]);
  h.dispose();
});

test("no editor, or not Python: a short message and no task", async () => {
  const h = await host(["0"]);
  window.activeTextEditor = undefined;
  await runActiveFile(h);
  open(new FakeDocument(Uri.file(`${PROJECT}/notes.md`), "markdown"));
  await runActiveFile(h);
  assert.equal(tasks.executed.length, 0);
  assert.deepEqual(recorded.messages, [
    "Open a Python file to run it on GPUs.",
    "GPU Pilot runs Python files; notes.md is markdown.",
  ]);
  h.dispose();
});

test("the editor title button's Uri wins over the active editor", async () => {
  const h = await host(["0"]);
  open(new FakeDocument(Uri.file(`${PROJECT}/other.py`)));
  const picked = new FakeDocument(Uri.file(`${PROJECT}/picked.py`));
  onDisk(picked);
  workspace.textDocuments.push(picked);
  await runActiveFile(h, Uri.file(`${PROJECT}/picked.py`) as never);
  assert.deepEqual((await launched(0)).args, [`${PROJECT}/picked.py`]);
  h.dispose();
});
