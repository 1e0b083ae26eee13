// GPU Pilot: Install / Remove Jupyter Kernel (client/src/gpu/kernels.ts) and the selection file kept
// in step with the selection (client/src/gpu/kernelSelection.ts), with the stand-in `vscode` module
// and real processes: the interpreter is `python3` on PATH (no Python extension here), put first on
// PATH as a link to an interpreter with ipykernel.
import { recorded, windowStateEmitter } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { tmpdir } from "node:os";
import { commands } from "../../../../client/src/commands";
import type { Ctx } from "../../../../client/src/ctx";
import { registerSelectionFile, syncSelectionFile } from "../../../../client/src/gpu/kernelSelection";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { readSelectionState } from "../../../../common/src/kernel/selectionFile";

/** A Memento stand-in. */
function memento() {
  const m = new Map<string, unknown>();
  return {
    get: <T>(k: string) => m.get(k) as T | undefined,
    update: (k: string, v: unknown) => {
      m.set(k, v);
      return Promise.resolve();
    },
  };
}

/** Runs `body` with PATH starting at a folder whose `python3` links to `target` (then `pathRest`), and the Jupyter and state folders in a temp folder. */
async function withMachine<T>(
  target: string,
  body: (dir: string) => Promise<T>,
  pathRest: string | undefined = process.env.PATH,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "gp-client-kernel-"));
  mkdirSync(join(dir, "bin"));
  symlinkSync(target, join(dir, "bin", "python3"));
  const saved = {
    PATH: process.env.PATH,
    JUPYTER_DATA_DIR: process.env.JUPYTER_DATA_DIR,
    GPU_PILOT_STATE_DIR: process.env.GPU_PILOT_STATE_DIR,
  };
  Object.assign(process.env, {
    PATH: [join(dir, "bin"), pathRest].filter(Boolean).join(delimiter),
    JUPYTER_DATA_DIR: join(dir, "data"),
    GPU_PILOT_STATE_DIR: join(dir, "state"),
  });
  try {
    return await body(dir);
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

const hasIpykernel =
  spawnSync("/usr/bin/python3", ["-c", "import ipykernel"], { timeout: 30_000, stdio: "ignore" }).status === 0;

test(
  "Install Jupyter Kernel on Selected GPUs writes the kernel and the selection file; Remove Jupyter Kernel removes it",
  { skip: hasIpykernel ? false : "/usr/bin/python3 has no ipykernel", timeout: 120_000 },
  async () => {
    await withMachine("/usr/bin/python3", async (dir) => {
      recorded.messages.length = 0;
      const selection = new SelectionStore(memento());
      await selection.set(["1"]);
      const done = (await commands["gpuPilot.installKernel"]({ selection } as unknown as Ctx)()) as {
        name: string;
        dir: string;
        displayName: string;
        selectionFile: string;
      };
      assert.match(done.name, /^gpu-pilot-python3\.\d+-[0-9a-f]{6}$/);
      assert.equal(done.dir, join(dir, "data", "kernels", done.name));
      assert.equal(done.selectionFile, join(dir, "state", "selection.json"));
      assert.deepEqual(readSelectionState(done.selectionFile)?.devices, ["1"]);
      const spec = JSON.parse(readFileSync(join(done.dir, "kernel.json"), "utf8")) as {
        argv: string[];
        display_name: string;
      };
      assert.equal(spec.argv[0], join(dir, "bin", "python3"));
      assert.deepEqual(spec.argv.slice(2, 4), ["--selection", done.selectionFile]);
      assert.match(
        recorded.messages.join("\n"),
        /installed the Jupyter kernel "Python 3\.\d+ · GPU Pilot".*it starts on GPU 1/,
      );

      recorded.pickAnswers.push(done.name);
      assert.equal(await commands["gpuPilot.removeKernel"]({} as Ctx)(), done.name);
      assert.equal(existsSync(done.dir), false);
      assert.equal(await commands["gpuPilot.removeKernel"]({} as Ctx)(), undefined);
      assert.match(recorded.messages.at(-1)!, /no GPU Pilot kernel in /);
    });
  },
);

test(
  "Install Jupyter Kernel: an interpreter that cannot start is an error message, and nothing is written",
  { timeout: 60_000 },
  async () => {
    await withMachine(
      "/nonexistent/python3",
      async (dir) => {
        recorded.messages.length = 0;
        const selection = new SelectionStore(memento());
        assert.equal(await commands["gpuPilot.installKernel"]({ selection } as unknown as Ctx)(), undefined);
        assert.match(recorded.messages.join("\n"), /^GPU Pilot: Cannot start python3/m);
        assert.equal(existsSync(join(dir, "data")), false);
        assert.equal(existsSync(join(dir, "state")), false);
      },
      "",
    );
  },
);

test("the selection file follows the selection once it exists: on each change and when the window gains focus", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-client-sel-"));
  const file = join(dir, "selection.json");
  const selection = new SelectionStore(memento());
  const warnings: string[] = [];
  const subs = registerSelectionFile(
    selection,
    (l) =>
      windowStateEmitter.event((s) => {
        if (s.focused) l();
      }),
    (m) => warnings.push(m),
    file,
  );
  try {
    await selection.set(["2"]);
    assert.equal(existsSync(file), false, "no kernel installed: no file");
    assert.equal(
      syncSelectionFile(file, selection.get(), () => "nvidia", true),
      "written",
    );
    await selection.set(["0", "3"]);
    assert.deepEqual(readSelectionState(file)?.devices, ["0", "3"]);
    // Another window wrote its selection; this one gains focus: its own selection is written back.
    writeFileSync(file, JSON.stringify({ version: 1, devices: ["5"], vendor: "nvidia" }));
    windowStateEmitter.fire({ focused: false });
    assert.deepEqual(readSelectionState(file)?.devices, ["5"]);
    windowStateEmitter.fire({ focused: true });
    assert.deepEqual(readSelectionState(file)?.devices, ["0", "3"]);
    await selection.set([]);
    assert.deepEqual(
      readSelectionState(file)?.devices,
      [],
      "an empty selection is written: kernels then keep their environment's GPUs",
    );
    assert.deepEqual(warnings, []);
  } finally {
    for (const s of subs) s.dispose();
  }
});
