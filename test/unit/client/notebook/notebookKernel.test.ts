// The active notebook's running kernel in the client (client/src/notebook/, issue 42), with the
// stand-in `vscode` module and a test double of the Jupyter extension's kernel API
// (jupyterDouble.ts, after @vscode/jupyter-extension 1.1.1's typings): access asked once and
// remembered, the probe run through executeCode and its facts sent to the server, the status bar
// ("Kernel: GPU 1", "Kernel: GPUs 0,1", "Kernel: all GPUs") from the probe or from the launcher's
// start record, a kernel that does not answer within 2 s (cancelled, static lint, nothing shown),
// and Restart Kernel on Selected GPUs with its refusals.
import {
  activeNotebookEmitter,
  commands as fakeCommands,
  installedExtensions,
  recorded,
  Uri,
  window,
  workspace,
} from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { KERNEL_ACCESS_KEY, kernelspecNameOf, NotebookKernels } from "../../../../client/src/notebook/runningKernel";
import { restartKernelCommand } from "../../../../client/src/notebook/restartKernel";
import { jupyterApi } from "../../../../client/src/notebook/jupyterApi";
import { KERNEL_PROBE_SOURCE, PROBE_MARKER } from "../../../../common/src/kernel/probe";
import type { RunningKernelParams } from "../../../../common/src/kernel/runningKernel";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { installKernel } from "../../../../common/src/kernel/kernelspec";
import { readSelectionState } from "../../../../common/src/kernel/selectionFile";
import { JupyterDouble, KernelDouble } from "../../support/jupyterDouble";

/** A Memento stand-in. */
function memento() {
  const m = new Map<string, unknown>();
  return {
    get: <T>(k: string) => m.get(k) as T | undefined,
    update: (k: string, v: unknown) => {
      m.set(k, v);
      return Promise.resolve();
    },
    map: m,
  };
}

/** The probe's line for a kernel whose env has `env` and where torch did (or did not) initialise CUDA. */
function probeLine(env: Record<string, string | null>, torchInit: boolean): string {
  const off = { imported: false, initialised: false, devices: null };
  return `${PROBE_MARKER}${JSON.stringify({
    pid: 4242,
    env: {
      CUDA_VISIBLE_DEVICES: null,
      CUDA_DEVICE_ORDER: null,
      ROCR_VISIBLE_DEVICES: null,
      HIP_VISIBLE_DEVICES: null,
      GPU_PILOT_KERNEL_DEVICES: null,
      ...env,
    },
    frameworks: {
      torch: torchInit ? { imported: true, initialised: true, devices: 1, current: 0 } : off,
      jax: off,
      tensorflow: off,
      cupy: off,
    },
  })}\n`;
}

/** A notebook at `path` whose metadata names `kernelspec`, made active. */
function activeNotebook(path: string, kernelspec?: string) {
  const notebook = {
    uri: Uri.file(path),
    metadata: kernelspec ? { metadata: { kernelspec: { name: kernelspec, display_name: "x" } } } : {},
  };
  window.activeNotebookEditor = { notebook };
  workspace.notebookDocuments.length = 0;
  workspace.notebookDocuments.push(notebook);
  return notebook;
}

function setup(opts: { jupyter?: JupyterDouble; dataDir?: string; deadlineMs?: number } = {}) {
  recorded.messages.length = 0;
  recorded.answers.length = 0;
  recorded.statusItems.length = 0;
  const state = memento();
  const sent: RunningKernelParams[] = [];
  const kernels = new NotebookKernels({
    globalState: state,
    jupyter: () => Promise.resolve(opts.jupyter),
    dataDir: () => Promise.resolve(opts.dataDir ?? "/nonexistent"),
    send: (p) => sent.push(p),
    ...(opts.deadlineMs ? { deadlineMs: opts.deadlineMs } : {}),
  });
  const item = recorded.statusItems.find((i) => i.id === "gpuPilot.kernelGpus")!;
  return { kernels, state, sent, item };
}

test("access is asked once and remembered; granted, the probe runs through executeCode and its facts reach the server and the status bar", async () => {
  const jupyter = new JupyterDouble();
  const nb = activeNotebook("/tmp/a.ipynb");
  const kernel = new KernelDouble(() =>
    probeLine({ CUDA_VISIBLE_DEVICES: "1", GPU_PILOT_KERNEL_DEVICES: "1", CUDA_DEVICE_ORDER: "PCI_BUS_ID" }, true),
  );
  jupyter.kernelsByUri.set(nb.uri.toString(), kernel);
  const { kernels, state, sent, item } = setup({ jupyter });
  recorded.answers.push("Allow");
  const out = await kernels.refresh(nb as never);
  assert.equal(recorded.messages.length, 1);
  assert.match(
    recorded.messages[0],
    /^GPU Pilot can ask this notebook's running kernel, with one short snippet that changes nothing/,
  );
  assert.equal(state.map.get(KERNEL_ACCESS_KEY), "granted");
  assert.deepEqual(kernel.executed, [KERNEL_PROBE_SOURCE]);
  assert.deepEqual(out, {
    ok: true,
    facts: {
      initialisedBy: ["torch"],
      cudaVisibleDevices: "1",
      cudaDeviceOrder: "PCI_BUS_ID",
      rocrVisibleDevices: null,
      launcherDevices: "1",
      torchCurrent: 0,
      pid: 4242,
    },
  });
  assert.deepEqual(sent, [{ notebook: nb.uri.toString(), kernel: (out as { facts: unknown }).facts }]);
  assert.equal(item.text, "$(notebook) Kernel: GPU 1");
  assert.equal(item.shown, true);
  assert.equal(item.command, "gpuPilot.restartKernelOnSelectedGpus");
  assert.match(String(item.tooltip), /the running kernel \(pid 4242\) reports it; CUDA is initialised there/);
  // The same facts again: nothing sent, nothing asked.
  await kernels.refresh(nb as never);
  assert.equal(recorded.messages.length, 1);
  assert.equal(sent.length, 1);
  // CUDA initialised: a cell that ran (busy, idle) probes no more until a restart; the restart forgets the facts.
  kernel.setStatus("busy");
  kernel.setStatus("idle");
  await new Promise((r) => setTimeout(r, 600));
  kernel.setStatus("idle");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(kernel.executed.length, 2);
  kernel.answer = () => probeLine({ CUDA_VISIBLE_DEVICES: "0,1", GPU_PILOT_KERNEL_DEVICES: "0,1" }, false);
  kernel.setStatus("restarting");
  assert.deepEqual(
    sent.at(-1),
    { notebook: nb.uri.toString(), kernel: null },
    "the lint is static while the kernel restarts",
  );
  kernel.setStatus("idle");
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(kernel.executed.length, 3, "probed after the restart");
  assert.equal(item.text, "$(notebook) Kernel: GPUs 0,1");
  assert.deepEqual(sent.at(-1)?.kernel?.initialisedBy, []);
  // Its own probe's busy/idle does not probe again.
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(kernel.executed.length, 3);
  kernels.dispose();
});

test("a kernel with no selection variable shows 'all GPUs'; refused or dismissed access is never asked again and the kernel is never called", async () => {
  const jupyter = new JupyterDouble();
  const nb = activeNotebook("/tmp/b.ipynb");
  jupyter.kernelsByUri.set(nb.uri.toString(), new KernelDouble(() => probeLine({}, false)));
  let s = setup({ jupyter });
  s.state.map.set(KERNEL_ACCESS_KEY, "granted");
  await s.kernels.refresh(nb as never);
  assert.equal(s.item.text, "$(notebook) Kernel: all GPUs");
  s.kernels.dispose();

  for (const answer of ["Don't Allow", undefined]) {
    s = setup({ jupyter });
    jupyter.getKernelCalls = 0;
    recorded.answers.push(answer);
    assert.equal(await s.kernels.refresh(nb as never), undefined);
    assert.equal(await s.kernels.refresh(nb as never), undefined);
    assert.equal(recorded.messages.length, 1, "asked once");
    assert.equal(s.state.map.get(KERNEL_ACCESS_KEY), "denied");
    assert.equal(jupyter.getKernelCalls, 0);
    assert.deepEqual(s.sent, []);
    assert.equal(s.item.shown, false);
    s.kernels.dispose();
  }
  // No Jupyter extension: nothing asked at all.
  s = setup({});
  assert.equal(await s.kernels.refresh(nb as never), undefined);
  assert.equal(recorded.messages.length, 0);
  s.kernels.dispose();
});

test(
  "a kernel that does not answer the probe within 2 s: cancelled, the server told 'not known', nothing shown to the user",
  { timeout: 20_000 },
  async () => {
    const jupyter = new JupyterDouble();
    const nb = activeNotebook("/tmp/c.ipynb");
    const kernel = new KernelDouble(() => probeLine({ CUDA_VISIBLE_DEVICES: "1" }, true));
    jupyter.kernelsByUri.set(nb.uri.toString(), kernel);
    const { kernels, state, sent, item } = setup({ jupyter });
    state.map.set(KERNEL_ACCESS_KEY, "granted");
    await kernels.refresh(nb as never);
    assert.equal(sent.length, 1);
    kernel.answer = () => undefined; // busy with a long cell: the probe waits in its queue
    const t0 = Date.now();
    const out = await kernels.refresh(nb as never);
    const took = Date.now() - t0;
    assert.deepEqual(out, { ok: false, why: "timeout" });
    assert.ok(took >= 1900 && took < 4000, `gave up after ${took} ms`);
    assert.equal(kernel.cancelled, true, "the execution's token was cancelled");
    assert.equal(sent.length, 2);
    assert.deepEqual(
      sent.at(-1),
      { notebook: nb.uri.toString(), kernel: null },
      "the facts of before are dropped: the lint is static",
    );
    assert.equal(recorded.messages.length, 0, "quiet");
    assert.equal(item.shown, false);
    // Output that is not the probe's, another language: no facts either.
    kernel.answer = () => "hello\n";
    assert.deepEqual(await kernels.refresh(nb as never), { ok: false, why: "no-answer" });
    jupyter.kernelsByUri.set(nb.uri.toString(), new KernelDouble(() => "x", "julia"));
    assert.deepEqual(await kernels.refresh(nb as never), { ok: false, why: "not-python" });
    kernels.dispose();
  },
);

test("without kernel access the status bar reads the launcher's start record of the notebook's GPU Pilot kernelspec", async () => {
  const data = mkdtempSync(join(tmpdir(), "gp-nbk-"));
  const dir = join(data, "kernels", "gpu-pilot-venv-abc123");
  mkdirSync(join(dir, "starts"), { recursive: true });
  writeFileSync(
    join(dir, "starts", "77.json"),
    JSON.stringify({
      version: 1,
      pid: 77,
      applied: "1",
      variable: "CUDA_VISIBLE_DEVICES",
      visible: "1",
      startedAt: "2026-12-05T11:00:00Z",
    }),
  );
  const nb = activeNotebook("/tmp/d.ipynb", "gpu-pilot-venv-abc123");
  assert.equal(kernelspecNameOf(nb as never), "gpu-pilot-venv-abc123");
  assert.equal(
    kernelspecNameOf({ metadata: { custom: { metadata: { kernelspec: { name: "../x" } } } } } as never),
    undefined,
    "not a kernel name",
  );
  const { kernels, item } = setup({ dataDir: data });
  await kernels.refresh(nb as never);
  assert.equal(item.text, "$(notebook) Kernel: GPU 1");
  assert.match(
    String(item.tooltip),
    /launcher recorded it at the start of 2026-12-05T11:00:00Z \(pid 77, CUDA_VISIBLE_DEVICES\)/,
  );
  // The active notebook goes away: hidden.
  window.activeNotebookEditor = undefined;
  kernels.register(activeNotebookEmitter.event as never);
  activeNotebookEmitter.fire(undefined);
  assert.equal(item.shown, false);
  kernels.dispose();
});

test("Restart Kernel on Selected GPUs: selects the asked GPU, writes the selection file and restarts through jupyter.restartkernel; refusals say why", async () => {
  const data = mkdtempSync(join(tmpdir(), "gp-restart-"));
  const file = join(data, "state", "selection.json");
  installKernel({
    dataDir: data,
    name: "gp-follow",
    env: { python: "/usr/bin/python3", version: "3.12", debugpy: false },
    selection: { kind: "file", file },
  });
  installKernel({
    dataDir: data,
    name: "gp-pinned",
    env: { python: "/usr/bin/python3", version: "3.12", debugpy: false },
    selection: { kind: "pinned", devices: ["2"], vendor: "nvidia" },
  });
  const { kernels } = setup({});
  const store = memento();
  const selection = new SelectionStore(store);
  await selection.set(["0"]);
  const deps = { selection, kernels, dataDir: () => Promise.resolve(data), selectionFile: file };
  recorded.executed.length = 0;
  recorded.executedWith.length = 0;

  // No notebook.
  window.activeNotebookEditor = undefined;
  workspace.notebookDocuments.length = 0;
  assert.equal(await restartKernelCommand(deps), "no-notebook");
  assert.match(recorded.messages.at(-1)!, /open a notebook/);

  // A GPU Pilot kernel, the Jupyter extension's command there: the code action's arguments.
  const nb = activeNotebook("/tmp/e.ipynb", "gp-follow");
  fakeCommands.contributed.add("jupyter.restartkernel");
  assert.equal(await restartKernelCommand(deps, nb.uri.toString(), ["1"]), "restarted");
  assert.deepEqual(selection.get(), ["1"]);
  assert.deepEqual(readSelectionState(file)?.devices, ["1"]);
  assert.deepEqual(recorded.executedWith.at(-1), { command: "jupyter.restartkernel", args: [nb.uri] });

  // Bad ids from a caller.
  assert.equal(await restartKernelCommand(deps, nb.uri.toString(), ["1; rm -rf /"]), "bad-ids");
  assert.match(recorded.messages.at(-1)!, /not GPU ids/);

  // No GPU selected: confirmed first; dismissed = not restarted; "Restart Anyway" writes an empty selection.
  await selection.set([]);
  recorded.answers.push(undefined);
  assert.equal(await restartKernelCommand(deps), "cancelled");
  assert.match(
    recorded.messages.at(-1)!,
    /no GPU is selected, so the restarted kernel gets no CUDA_VISIBLE_DEVICES from GPU Pilot/,
  );
  assert.deepEqual(readSelectionState(file)?.devices, ["1"], "unchanged");
  recorded.answers.push("Restart Anyway");
  assert.equal(await restartKernelCommand(deps), "restarted");
  assert.deepEqual(readSelectionState(file)?.devices, []);

  // A kernel pinned at install, another kernel (offers to install one), no Jupyter extension.
  activeNotebook("/tmp/f.ipynb", "gp-pinned");
  assert.equal(await restartKernelCommand(deps), "pinned");
  assert.match(recorded.messages.at(-1)!, /pinned to GPU 2/);
  activeNotebook("/tmp/g.ipynb", "python3");
  recorded.answers.push("Install GPU Pilot Kernel");
  assert.equal(await restartKernelCommand(deps), "not-gpu-pilot");
  assert.match(recorded.messages.at(-1)!, /this notebook's kernel \(python3\) is not a GPU Pilot kernel/);
  assert.equal(recorded.executed.at(-1), "gpuPilot.installKernel");
  activeNotebook("/tmp/e.ipynb", "gp-follow");
  await selection.set(["1"]);
  fakeCommands.contributed.delete("jupyter.restartkernel");
  assert.equal(await restartKernelCommand(deps), "no-jupyter");
  assert.match(
    recorded.messages.at(-1)!,
    /the Jupyter extension \(ms-toolsai\.jupyter\) is not installed or not active/,
  );
  kernels.dispose();
});

test("jupyterApi: undefined without the extension or without a kernels API; the double through activate()", async () => {
  installedExtensions.clear();
  assert.equal(await jupyterApi(), undefined);
  installedExtensions.set("ms-toolsai.jupyter", {
    isActive: false,
    exports: undefined,
    activate: () => Promise.resolve({}),
  });
  assert.equal(await jupyterApi(), undefined);
  const double = new JupyterDouble();
  installedExtensions.set("ms-toolsai.jupyter", {
    isActive: false,
    exports: undefined,
    activate: () => Promise.resolve(double),
  });
  assert.equal(await jupyterApi(), double);
  installedExtensions.set("ms-toolsai.jupyter", {
    isActive: false,
    exports: undefined,
    activate: () => Promise.reject(new Error("failed")),
  });
  assert.equal(await jupyterApi(), undefined);
  installedExtensions.clear();
});
