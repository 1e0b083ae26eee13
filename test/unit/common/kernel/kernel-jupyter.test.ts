/**
 * A GPU Pilot kernel in real Jupyter (issue 42 item 1, "Tested for real"): the kernelspec is
 * installed into a temporary JUPYTER_DATA_DIR for an interpreter that has ipykernel and
 * jupyter_client (Debian's python3-ipykernel and python3-jupyter-client, which .ci/run installs),
 * started with jupyter_client's KernelManager by a small driver, asked for its environment,
 * restarted after the selection file changed, and asked again; `jupyter kernelspec list --json`
 * lists it. Skipped, saying why, only where no interpreter has ipykernel and jupyter_client.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { installKernel } from "../../../../common/src/kernel/kernelspec";
import { kernelEnvironmentOf, probePython, resolveJupyterDataDir } from "../../../../common/src/kernel/pythonProbe";
import { writeSelectionState } from "../../../../common/src/kernel/selectionFile";

/** The first interpreter with ipykernel and jupyter_client, or undefined. */
const python = ["/usr/bin/python3", "python3"].find(
  (p) => spawnSync(p, ["-c", "import ipykernel, jupyter_client"], { timeout: 30_000, stdio: "ignore" }).status === 0,
);
/** execa (ESM only), loaded with import() as the client loads it. */
const loadExeca = async () => (await import("execa")).execa;
const skip = python
  ? false
  : "no python3 with ipykernel and jupyter_client (Debian: apt-get install python3-ipykernel python3-jupyter-client)";

/**
 * Starts kernel `argv[1]`, prints `FIRST <json>` (what the kernel sees), waits for a line on stdin,
 * restarts the kernel, prints `SECOND <json>`, shuts it down.
 */
const DRIVER = `import json, sys
from jupyter_client.manager import KernelManager
NAMES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPU_PILOT_KERNEL_DEVICES", "GP_USER_VAR")
CODE = "import json, os, sys; print(json.dumps(dict([(k, os.environ.get(k)) for k in %r] + [('pid', os.getpid()), ('executable', sys.executable)])))" % (NAMES,)
km = KernelManager(kernel_name=sys.argv[1])
km.start_kernel()
kc = km.client()
kc.start_channels()
def read():
    out = []
    hook = lambda m: out.append(m["content"].get("text", "")) if m["msg_type"] == "stream" and m["content"].get("name") == "stdout" else None
    reply = kc.execute_interactive(CODE, timeout=60, output_hook=hook)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(out).strip()
try:
    kc.wait_for_ready(timeout=90)
    print("FIRST " + read(), flush=True)
    sys.stdin.readline()
    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=90)
    print("SECOND " + read(), flush=True)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
`;

test(
  "a real kernel starts on the selected GPU, and a restart after the selection changed moves it",
  { skip, timeout: 240_000 },
  async () => {
    const execa = await loadExeca();
    const dir = mkdtempSync(join(tmpdir(), "gp-jupyter-"));
    const env = {
      ...process.env,
      JUPYTER_DATA_DIR: join(dir, "data"),
      JUPYTER_RUNTIME_DIR: join(dir, "runtime"),
      GP_USER_VAR: "kept",
      CUDA_VISIBLE_DEVICES: "7",
    };
    const selection = join(dir, "state", "selection.json");
    writeSelectionState(selection, ["1"], "nvidia");
    const kernelEnv = await kernelEnvironmentOf(python!);
    const data = await resolveJupyterDataDir(env);
    assert.deepEqual(data, { dir: join(dir, "data"), source: "JUPYTER_DATA_DIR" });
    installKernel({ dataDir: data.dir, name: "gp-test", env: kernelEnv, selection: { kind: "file", file: selection } });

    const child = execa(python!, ["-c", DRIVER, "gp-test"], {
      env,
      extendEnv: false,
      timeout: 200_000,
      maxBuffer: 1024 * 1024,
      stdin: "pipe",
      reject: false,
    });
    let seen = "";
    let moved = false;
    child.stdout!.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (!moved && /^FIRST .*\n/m.test(seen)) {
        moved = true;
        writeSelectionState(selection, ["0", "2"], "nvidia");
        child.stdin!.write("go\n");
      }
    });
    const r = await child;
    assert.equal(r.exitCode, 0, `driver failed: ${r.stderr}`);
    const first = JSON.parse(/^FIRST (.*)$/m.exec(r.stdout)![1]) as Record<string, string | number | null>;
    const second = JSON.parse(/^SECOND (.*)$/m.exec(r.stdout)![1]) as Record<string, string | number | null>;
    assert.deepEqual(
      { ...first, pid: 0 },
      {
        CUDA_VISIBLE_DEVICES: "1",
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
        GPU_PILOT_KERNEL_DEVICES: "1",
        GP_USER_VAR: "kept",
        pid: 0,
        executable: kernelEnv.python,
      },
    );
    assert.deepEqual(
      { ...second, pid: 0 },
      {
        CUDA_VISIBLE_DEVICES: "0,2",
        CUDA_DEVICE_ORDER: "PCI_BUS_ID",
        GPU_PILOT_KERNEL_DEVICES: "0,2",
        GP_USER_VAR: "kept",
        pid: 0,
        executable: kernelEnv.python,
      },
    );
    assert.notEqual(first.pid, second.pid, "the restart started a new kernel process");
  },
);

test(
  "jupyter kernelspec list --json lists the GPU Pilot kernel with its launcher",
  { skip, timeout: 60_000 },
  async () => {
    const execa = await loadExeca();
    const dir = mkdtempSync(join(tmpdir(), "gp-jupyter-"));
    const env = { ...process.env, JUPYTER_DATA_DIR: join(dir, "data") };
    const kernelEnv = await kernelEnvironmentOf(python!);
    const { dir: kdir } = installKernel({
      dataDir: join(dir, "data"),
      name: "gp-list",
      env: kernelEnv,
      selection: { kind: "pinned", devices: ["3"], vendor: "nvidia" },
    });
    // `jupyter kernelspec` is jupyter_client's command (Debian: the jupyter-client package); the module is the same code.
    const onPath = await execa("jupyter", ["kernelspec", "list", "--json"], {
      env,
      extendEnv: false,
      reject: false,
      timeout: 30_000,
      stdin: "ignore",
      maxBuffer: 1024 * 1024,
    });
    const r =
      onPath.exitCode === 0
        ? onPath
        : await execa(python!, ["-m", "jupyter_client.kernelspecapp", "list", "--json"], {
            env,
            extendEnv: false,
            timeout: 30_000,
            stdin: "ignore",
            maxBuffer: 1024 * 1024,
          });
    const specs = (
      JSON.parse(r.stdout) as {
        kernelspecs: Record<string, { resource_dir: string; spec: { display_name: string; argv: string[] } }>;
      }
    ).kernelspecs;
    assert.equal(specs["gp-list"].resource_dir, kdir);
    assert.equal(
      specs["gp-list"].spec.display_name,
      `Python ${kernelEnv.version}${kernelEnv.envName ? ` (${kernelEnv.envName})` : ""} · GPU Pilot · GPU 3`,
    );
    assert.deepEqual(specs["gp-list"].spec.argv.slice(2, 7), ["--gpus", "3", "--vendor", "nvidia", "--"]);
  },
);

test(
  "an interpreter without ipykernel: the message names ipykernel and how to install it",
  { timeout: 60_000 },
  async (t) => {
    const execa = await loadExeca();
    // A fresh virtual environment without site packages has no ipykernel, whatever the machine has.
    const venv = join(mkdtempSync(join(tmpdir(), "gp-venv-")), "bare");
    const made = await execa("python3", ["-m", "venv", "--without-pip", venv], {
      reject: false,
      timeout: 30_000,
      stdin: "ignore",
    });
    if (made.exitCode !== 0) {
      t.skip(`python3 -m venv failed: ${made.stderr.trim().slice(-200)}`);
      return;
    }
    const py = join(venv, "bin", "python");
    const facts = await probePython(py);
    assert.equal(facts.envName, "bare");
    assert.match(facts.ipykernelError ?? "", /No module named 'ipykernel'/);
    await assert.rejects(
      kernelEnvironmentOf(py),
      (e: Error) =>
        /has no usable ipykernel \(ModuleNotFoundError/.test(e.message) &&
        e.message.includes(`${facts.python} -m pip install ipykernel`),
    );
  },
);
