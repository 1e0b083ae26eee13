// End-to-end tests of "Run on GPUs" in a real VS Code: every launcher runs launch_target.py as a Task
// (a CustomExecution: VS Code resolves no `${...}` in it, checked with files named `${env:HOME}.py`
// and `x_${command:...}.py` whose marker command must never run);
// the stand-in launchers of test/fixtures/bin/launchers (first on the run's PATH through
// gpuPilot.run.env) and launch_target.py itself record their argv and CUDA variables into
// $GPU_PILOT_LAUNCH_RECORD, checked exactly here. Plus the checks on the rule cases (test/cases) (API
// checkRun: nothing is asked, nothing runs) and the CodeLens above `if __name__ == "__main__":`.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { EXTENSION_ID, getApi, openWorkspaceFile, outDir, waitFor, workspaceRoot } from "./util";

/** The parts of GPU Pilot's API (client/src/api.ts) these tests use beyond util.ts's. */
interface RunApi {
  setSelection(ids: string[]): Promise<void>;
  readonly lastRun?: {
    launcher: string;
    command: string;
    args: string[];
    unset: string[];
    exitCode?: number | null;
    title: string;
    file: string;
  };
  checkRun(uri?: vscode.Uri, launcher?: string): Promise<{ kind: string; message: string }[]>;
}

interface Recorded {
  launcher: string;
  argv: string[];
  cwd: string;
  env: { CUDA_VISIBLE_DEVICES: string | null; CUDA_DEVICE_ORDER: string | null };
}

const SETTINGS = ["run.launcher", "run.env", "run.args", "run.dockerImage", "run.customArgs"];
const SCRIPT_ARGS = ["--flag", "a b; $(not run)"];

suite("Run on GPUs", () => {
  let api: RunApi;
  let repo: string;
  let bin: string;
  let record: string;
  let file: string;
  let ws: string;
  let python = "";

  const config = () => vscode.workspace.getConfiguration("gpuPilot");

  suiteSetup(async () => {
    api = (await getApi()) as unknown as RunApi;
    repo = vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath;
    bin = path.join(repo, "test", "fixtures", "bin", "launchers");
    record = path.join(outDir(), "launch-record.json");
    ws = workspaceRoot();
    file = path.join(ws, "launch_target.py");
    await api.setSelection(["0", "1"]);
    const target = vscode.ConfigurationTarget.Workspace;
    await config().update(
      "run.env",
      { PATH: `${bin}${path.delimiter}\${env:PATH}`, GPU_PILOT_LAUNCH_RECORD: record },
      target,
    );
    await config().update("run.args", SCRIPT_ARGS, target);
    await config().update("run.dockerImage", "pytorch/pytorch:latest", target);
    await config().update(
      "run.customArgs",
      [path.join(bin, "accelerate"), "launch", "--num_processes=${count}", "--gpu_ids=${gpus}", "${file}"],
      target,
    );
  });

  suiteTeardown(async () => {
    for (const key of SETTINGS) await config().update(key, undefined, vscode.ConfigurationTarget.Workspace);
    await api.setSelection([]);
  });

  /** Runs `rel` (default launch_target.py) with `launcher`; resolves with what the started program recorded, after the task ended with 0. */
  async function runWith(launcher: string, rel = "launch_target.py"): Promise<Recorded> {
    await config().update("run.launcher", launcher, vscode.ConfigurationTarget.Workspace);
    fs.rmSync(record, { force: true });
    await openWorkspaceFile(rel);
    await vscode.commands.executeCommand("gpuPilot.runActiveFile");
    const target = path.join(ws, rel);
    const run = await waitFor(
      () => {
        const r = api.lastRun;
        return r && r.launcher === launcher && r.file === target && r.exitCode !== undefined ? r : undefined;
      },
      `the ${launcher} run of ${rel} to end (last run: ${JSON.stringify(api.lastRun)})`,
      60_000,
    );
    assert.equal(run.exitCode, 0, `${run.title} exit code; ${JSON.stringify(run)}`);
    const text = await waitFor(
      () => (fs.existsSync(record) ? fs.readFileSync(record, "utf8") : undefined),
      `${record} from the ${launcher} run`,
      10_000,
    );
    const got = JSON.parse(text) as Recorded;
    console.log(`[gpu-pilot e2e] ${launcher}: ${run.command} ${JSON.stringify(got.argv)} ${JSON.stringify(got.env)}`);
    return got;
  }

  // deepspeed, docker and srun must not see the selection's variables, whether a terminal would get
  // them (GPU Pilot's terminal environment) or the extension host has them: both are removed from
  // their environment, and only CUDA_DEVICE_ORDER=PCI_BUS_ID, set by deepspeed's and srun's own
  // launch, remains.
  const terminalEnvironment = () =>
    (
      api as unknown as { getTerminalEnvironment(): Record<string, { value: string } | undefined> }
    ).getTerminalEnvironment();
  /** What a task's process would inherit: VS Code's environment, then GPU Pilot's terminal environment. */
  const inherited = (name: "CUDA_VISIBLE_DEVICES" | "CUDA_DEVICE_ORDER") =>
    terminalEnvironment()[name]?.value ?? process.env[name] ?? null;
  /** The run's program really was started without the variables it would otherwise have inherited. */
  const notInherited = (got: Recorded, own: Partial<Recorded["env"]>) => {
    assert.equal(
      inherited("CUDA_VISIBLE_DEVICES"),
      "0,1",
      "the selection is in the terminal environment (what a task inherits)",
    );
    assert.deepEqual(got.env, { CUDA_VISIBLE_DEVICES: null, CUDA_DEVICE_ORDER: null, ...own });
    const run = api.lastRun!;
    assert.deepEqual(run.unset, ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"]);
    assert.equal(path.basename(run.command), got.launcher, "the launcher runs directly");
  };

  test("python: <python> launch_target.py <args>, CUDA_VISIBLE_DEVICES=0,1, CUDA_DEVICE_ORDER=PCI_BUS_ID", async () => {
    const got = await runWith("python");
    python = api.lastRun!.command;
    assert.deepEqual(got.launcher, "python");
    assert.deepEqual(got.argv, [file, ...SCRIPT_ARGS]);
    assert.deepEqual(got.env, { CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
    assert.equal(got.cwd, ws);
  });

  test("torchrun --standalone --nproc_per_node=2", async () => {
    const got = await runWith("torchrun");
    assert.equal(got.launcher, "torchrun");
    assert.deepEqual(got.argv, ["--standalone", "--nproc_per_node=2", file, ...SCRIPT_ARGS]);
    assert.deepEqual(got.env, { CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
    assert.equal(api.lastRun!.command, path.join(bin, "torchrun"), "found on the run's PATH");
  });

  test("accelerate launch --num_processes=2 --gpu_ids=0,1", async () => {
    const got = await runWith("accelerate");
    assert.equal(got.launcher, "accelerate");
    assert.deepEqual(got.argv, ["launch", "--num_processes=2", "--gpu_ids=0,1", file, ...SCRIPT_ARGS]);
    assert.deepEqual(got.env, { CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  });

  test("deepspeed --include localhost:0,1, without CUDA_VISIBLE_DEVICES", async () => {
    const got = await runWith("deepspeed");
    assert.equal(got.launcher, "deepspeed");
    assert.deepEqual(got.argv, ["--include", "localhost:0,1", file, ...SCRIPT_ARGS]);
    notInherited(got, { CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  });

  test("custom: gpuPilot.run.customArgs with ${count}, ${gpus}, ${file}; script arguments follow", async () => {
    const got = await runWith("custom");
    assert.equal(got.launcher, "accelerate");
    assert.deepEqual(got.argv, ["launch", "--num_processes=2", "--gpu_ids=0,1", file, ...SCRIPT_ARGS]);
    assert.deepEqual(got.env, { CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  });

  test('docker run --rm --gpus "device=0,1" -v <ws>:<ws> -w <ws> <image> python <file>, no CUDA variables', async () => {
    const got = await runWith("docker");
    assert.equal(got.launcher, "docker");
    assert.deepEqual(got.argv, [
      "run",
      "--rm",
      "--gpus",
      '"device=0,1"',
      "-v",
      `${ws}:${ws}`,
      "-w",
      ws,
      "pytorch/pytorch:latest",
      "python",
      file,
      ...SCRIPT_ARGS,
    ]);
    notInherited(got, {});
  });

  test("slurm: srun --gpus=2 <python> <file>", async () => {
    const got = await runWith("slurm");
    assert.equal(got.launcher, "srun");
    assert.deepEqual(got.argv, ["--gpus=2", python || "python3", file, ...SCRIPT_ARGS]);
    notInherited(got, { CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
  });

  test("files named ${env:HOME}.py and x_${command:…}.py: argv byte for byte, the marker command never runs", async () => {
    const marker = "gpuPilotE2e.marker";
    let ran = 0;
    const reg = vscode.commands.registerCommand(marker, () => {
      ran++;
      return "MARKER-RAN";
    });
    const names = ["${env:HOME}.py", `x_\${command:${marker}}.py`, "${workspaceFolder}_${config:editor.fontSize}.py"];
    const args = ["${env:HOME}", `\${command:${marker}}`, "${workspaceFolder}"];
    const source = fs.readFileSync(file, "utf8");
    try {
      await config().update("run.args", args, vscode.ConfigurationTarget.Workspace);
      for (const name of names) fs.writeFileSync(path.join(ws, name), source);
      for (const name of names) {
        for (const launcher of ["python", "torchrun"]) {
          const got = await runWith(launcher, name);
          const target = path.join(ws, name);
          const want =
            launcher === "python" ? [target, ...args] : ["--standalone", "--nproc_per_node=2", target, ...args];
          assert.deepEqual(got.argv, want, `${launcher} ${name}`);
          assert.equal(got.cwd, ws);
          assert.deepEqual(got.env, { CUDA_VISIBLE_DEVICES: "0,1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" });
          assert.equal(api.lastRun!.title, `${name} on GPU 0,1${launcher === "python" ? "" : " (torchrun)"}`);
        }
      }
      assert.equal(ran, 0, "the marker command never ran");
    } finally {
      reg.dispose();
      await config().update("run.args", SCRIPT_ARGS, vscode.ConfigurationTarget.Workspace);
      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      for (const name of names) fs.rmSync(path.join(ws, name), { force: true });
    }
  });

  test("checks on the rule cases: ddp_ok.py (LOCAL_RANK) suggests torchrun with python; env_after_is_available.py's write has no effect (GPU001) and replaces nothing; renumbering_ok.py's does", async () => {
    const cases = path.join(repo, "test", "cases");
    const c15 = vscode.Uri.file(path.join(cases, "ddp_ok.py"));
    // The fake nvidia-smi shows someone's python3 on GPU 0: a "busy" warning may come too (it never blocks).
    const notBusy = <T extends { kind: string }>(l: T[]) => l.filter((f) => f.kind !== "busy");
    const py = notBusy(await api.checkRun(c15, "python"));
    assert.deepEqual(
      py.map((f) => f.kind),
      ["needsDistributedLauncher"],
      JSON.stringify(py),
    );
    assert.match(
      py[0].message,
      /reads LOCAL_RANK \(line 7: os\.environ\["LOCAL_RANK"\]\).*Run it with torchrun \(--nproc_per_node=2/,
    );
    assert.deepEqual(notBusy(await api.checkRun(c15, "torchrun")), []);
    // Its write comes after torch.cuda.is_available(): GPU001, no effect, so it replaces nothing (the
    // engine's verdict, asked of the language server with gpuPilot/runFacts).
    const c01 = notBusy(await api.checkRun(vscode.Uri.file(path.join(cases, "env_after_is_available.py")), "python"));
    assert.deepEqual(
      c01.map((f) => f.kind),
      [],
      JSON.stringify(c01),
    );
    // A write before CUDA initialises takes effect and does replace the selection.
    const c16 = notBusy(await api.checkRun(vscode.Uri.file(path.join(cases, "renumbering_ok.py")), "python"));
    assert.deepEqual(
      c16.map((f) => f.kind),
      ["overridesSelection"],
      JSON.stringify(c16),
    );
    assert.match(
      c16[0].message,
      /sets CUDA_VISIBLE_DEVICES itself to "3" \(line 4\), which replaces the selection "0,1"/,
    );
    assert.deepEqual(
      notBusy(await api.checkRun(vscode.Uri.file(file), "python")),
      [],
      "launch_target.py: nothing to ask",
    );
  });

  test('CodeLens "Run on GPU 0,1" above if __name__ == "__main__":', async () => {
    await config().update("run.launcher", undefined, vscode.ConfigurationTarget.Workspace);
    const editor = await openWorkspaceFile("launch_target.py");
    const guard = editor.document
      .getText()
      .split(/\r?\n/)
      .findIndex((l) => l.startsWith("if __name__ == "));
    const lens = await waitFor(
      async () => {
        const lenses =
          (await vscode.commands.executeCommand<vscode.CodeLens[]>(
            "vscode.executeCodeLensProvider",
            editor.document.uri,
            10,
          )) ?? [];
        return lenses.find((l) => l.command?.command === "gpuPilot.runActiveFile");
      },
      "the Run on GPU CodeLens",
      30_000,
    );
    assert.equal(lens.command?.title, "Run on GPU 0,1");
    assert.equal(lens.range.start.line, guard);
  });
});
