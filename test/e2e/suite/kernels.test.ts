// Issue 42: GPU Pilot kernels in a real VS Code (code-server). The command the palette runs,
// GPU Pilot: Install Jupyter Kernel on Selected GPUs, writes a kernelspec into a temporary
// JUPYTER_DATA_DIR that Debian's real Jupyter lists (`jupyter kernelspec list --json`); then a
// notebook whose metadata names that kernel, opened with VS Code's built-in ipynb serializer, is
// recognised as a GPU Pilot kernel by Restart Kernel on Selected GPUs, which writes the selection
// and stops at the missing Jupyter extension (it cannot be installed in this code-server) with its
// message. The command is run with executeCommand (the same registered handler the palette calls),
// not by typing into the palette.
/// <reference types="mocha" />
import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { getApi, outDir, workspaceRoot } from "./util";

/** Whether python3 on PATH imports ipykernel and `jupyter` answers (Debian: python3-ipykernel, jupyter-core). */
function jupyterHere(): boolean {
  const py = spawnSync("python3", ["-c", "import ipykernel"], { timeout: 30_000, stdio: "ignore" });
  const jp = spawnSync("jupyter", ["--version"], { timeout: 30_000, stdio: "ignore" });
  return py.status === 0 && jp.status === 0;
}

suite("GPU Pilot: Jupyter kernels", () => {
  test("Install Jupyter Kernel writes a kernelspec Jupyter lists; Restart Kernel on Selected GPUs knows it and says the Jupyter extension is missing", async function () {
    this.timeout(120_000);
    if (!jupyterHere()) this.skip();
    const api = await getApi();
    const base = mkdtempSync(path.join(outDir(), "kernels-"));
    const saved = {
      JUPYTER_DATA_DIR: process.env.JUPYTER_DATA_DIR,
      GPU_PILOT_STATE_DIR: process.env.GPU_PILOT_STATE_DIR,
    };
    process.env.JUPYTER_DATA_DIR = path.join(base, "data");
    process.env.GPU_PILOT_STATE_DIR = path.join(base, "state");
    try {
      await api.setSelection(["1"]);
      const done = await vscode.commands.executeCommand<
        { name: string; dir: string; displayName: string; selectionFile: string } | undefined
      >("gpuPilot.installKernel");
      assert.ok(done, "the install returned nothing (see the GPU Pilot output)");
      assert.equal(done.dir, path.join(base, "data", "kernels", done.name));
      assert.match(done.displayName, /^Python 3\.\d+ · GPU Pilot$/);
      const listed = spawnSync("jupyter", ["kernelspec", "list", "--json"], {
        encoding: "utf8",
        timeout: 60_000,
        env: { ...process.env },
      });
      assert.equal(listed.status, 0, listed.stderr);
      const specs = (
        JSON.parse(listed.stdout) as {
          kernelspecs: Record<string, { resource_dir: string; spec: { display_name: string; argv: string[] } }>;
        }
      ).kernelspecs;
      const ours = specs[done.name];
      assert.ok(ours, `jupyter kernelspec list does not list ${done.name}: ${Object.keys(specs).join(", ")}`);
      assert.equal(ours.resource_dir, done.dir);
      assert.equal(ours.spec.display_name, done.displayName);
      assert.deepEqual(ours.spec.argv.slice(1, 4), [
        path.join(done.dir, "gpu_pilot_launcher.py"),
        "--selection",
        done.selectionFile,
      ]);
      assert.deepEqual((JSON.parse(readFileSync(done.selectionFile, "utf8")) as { devices: string[] }).devices, ["1"]);

      // A notebook saved with that kernel: the restart command finds it is a GPU Pilot kernel.
      const dir = path.join(workspaceRoot(), "kernels-e2e");
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, `restart-${Date.now()}.ipynb`);
      writeFileSync(
        file,
        JSON.stringify({
          nbformat: 4,
          nbformat_minor: 5,
          metadata: { kernelspec: { name: done.name, display_name: done.displayName, language: "python" } },
          cells: [{ cell_type: "code", metadata: {}, execution_count: null, outputs: [], source: ["import torch"] }],
        }),
      );
      const nb = await vscode.workspace.openNotebookDocument(vscode.Uri.file(file));
      await vscode.window.showNotebookDocument(nb);
      await api.setSelection(["0"]);
      const outcome = await vscode.commands.executeCommand<string>(
        "gpuPilot.restartKernelOnSelectedGpus",
        nb.uri.toString(),
        ["1"],
      );
      assert.equal(outcome, "no-jupyter", `metadata seen by VS Code: ${JSON.stringify(nb.metadata)}`);
      assert.deepEqual(api.getSelection(), ["1"]);
      assert.deepEqual((JSON.parse(readFileSync(done.selectionFile, "utf8")) as { devices: string[] }).devices, ["1"]);
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    } finally {
      await api.setSelection([]);
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });
});
