/**
 * GPU Pilot kernelspecs without Jupyter (issue 42 item 1): kernel names as Jupyter takes them, the
 * data folder's default, the selection file (written only when it changes, never through a link),
 * the launcher run with a stand-in for ipykernel (what it puts into the environment on NVIDIA, on
 * AMD, for an empty or broken selection, for pinned ids), install/list/remove and their refusals,
 * and `gpu-pilot kernel` through the CLI's main. kernel-jupyter.test.ts starts a real kernel.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { DEVICE_ID } from "../../../../common/src/gpu/selection";
import { DEVICE_ID_PATTERN, LAUNCHER_FILE_NAME, LAUNCHER_SOURCE } from "../../../../common/src/kernel/kernelLauncher";
import {
  buildKernelJson,
  defaultJupyterDataDir,
  defaultKernelName,
  installKernel,
  KernelError,
  type KernelEnvironment,
  listKernels,
  removeKernel,
  validateKernelName,
} from "../../../../common/src/kernel/kernelspec";
import { envNameOf } from "../../../../common/src/kernel/pythonProbe";
import {
  readSelectionState,
  selectionFileOf,
  stateDirOf,
  writeFileSafely,
  writeSelectionState,
} from "../../../../common/src/kernel/selectionFile";
import { main } from "../../../../server/src/cli";
import { kernelStartOf, readKernelStarts } from "../../../../common/src/kernel/startRecord";

const tmp = (p: string) => mkdtempSync(join(tmpdir(), `gp-kernel-${p}-`));
const ENV: KernelEnvironment = { python: "/usr/bin/python3", version: "3.12", envName: ".venv", debugpy: true };
const python = ["/usr/bin/python3", "python3"].find(
  (p) => spawnSync(p, ["-c", "pass"], { timeout: 10_000 }).status === 0,
);

test("kernel names: Jupyter's characters, lowercased; anything else is refused with the rule", () => {
  assert.equal(validateKernelName("My.Kernel_1-x"), "my.kernel_1-x");
  for (const bad of ["", "a b", "a/b", "..", ".", "ker\u00e9", "a;rm", "x".repeat(101), "-\n"]) {
    assert.throws(
      () => validateKernelName(bad),
      (e: unknown) => e instanceof KernelError && /kernel name|over 100/.test((e as Error).message),
      bad,
    );
  }
  const name = defaultKernelName(ENV, { kind: "file", file: "/s" });
  assert.match(name, /^gpu-pilot-venv-[0-9a-f]{6}$/);
  assert.equal(defaultKernelName(ENV, { kind: "file", file: "/other" }), name, "the same environment keeps its name");
  assert.notEqual(defaultKernelName({ ...ENV, python: "/p2/bin/python" }, { kind: "file", file: "/s" }), name);
  assert.notEqual(defaultKernelName(ENV, { kind: "pinned", devices: ["1"], vendor: "nvidia" }), name);
  assert.match(
    defaultKernelName({ ...ENV, envName: undefined }, { kind: "file", file: "/s" }),
    /^gpu-pilot-python3\.12-[0-9a-f]{6}$/,
  );
});

test("data folder default follows jupyter_core's jupyter_data_dir; state folder follows GPU_PILOT_STATE_DIR, XDG_STATE_HOME", () => {
  assert.equal(defaultJupyterDataDir({}, "linux", "/home/u"), "/home/u/.local/share/jupyter");
  assert.equal(defaultJupyterDataDir({ XDG_DATA_HOME: "/x" }, "linux", "/home/u"), "/x/jupyter");
  assert.equal(defaultJupyterDataDir({}, "darwin", "/Users/u"), "/Users/u/Library/Jupyter");
  assert.equal(defaultJupyterDataDir({ APPDATA: "C:/AppData" }, "win32", "C:/u"), join("C:/AppData", "jupyter"));
  assert.equal(stateDirOf({}, "linux", "/home/u"), "/home/u/.local/state/gpu-pilot");
  assert.equal(stateDirOf({ XDG_STATE_HOME: "/st" }, "linux", "/home/u"), "/st/gpu-pilot");
  assert.equal(stateDirOf({ GPU_PILOT_STATE_DIR: "/g", XDG_STATE_HOME: "/st" }, "linux", "/home/u"), "/g");
  assert.equal(selectionFileOf({ GPU_PILOT_STATE_DIR: "/g" }, "linux"), "/g/selection.json");
  assert.equal(envNameOf("/w/.venv", "/usr", false), ".venv");
  assert.equal(envNameOf("/usr", "/usr", false), undefined);
  assert.equal(envNameOf("/opt/conda/envs/train", "/opt/conda/envs/train", true), "train");
});

test("the launcher's device pattern is the selection's DEVICE_ID", () => {
  const samples = [
    "0",
    "12",
    "12345",
    "GPU-0123abcd-0123-4567-89ab-0123456789ab",
    "MIG-0123abcd-0123-4567-89ab-0123456789ab",
    "MIG-GPU-0123abcd-0123-4567-89ab-0123456789ab/1/0",
    "GPU-1",
    "0,1",
    " 1",
    "1;x",
    "gpu-0123abcd-0123-4567-89ab-0123456789ab",
  ];
  const ours = new RegExp(DEVICE_ID_PATTERN);
  for (const s of samples) assert.equal(ours.test(s), DEVICE_ID.test(s), s);
  assert.ok(LAUNCHER_SOURCE.includes(DEVICE_ID_PATTERN));
});

test("selection file: written through a temporary file, only when it changes, never through a link", () => {
  const dir = tmp("state");
  const file = join(dir, "deep", "selection.json");
  assert.equal(writeSelectionState(file, ["1"], "nvidia", new Date(0)), true);
  assert.deepEqual(readSelectionState(file), {
    version: 1,
    devices: ["1"],
    vendor: "nvidia",
    updatedAt: "1970-01-01T00:00:00.000Z",
  });
  assert.equal(lstatSync(join(dir, "deep")).mode & 0o777, 0o700);
  assert.equal(writeSelectionState(file, ["1"], "nvidia"), false, "unchanged: not rewritten");
  assert.equal(writeSelectionState(file, ["0", "1"], "nvidia"), true);
  assert.deepEqual(readSelectionState(file)?.devices, ["0", "1"]);
  const target = join(dir, "target");
  writeFileSync(target, "keep");
  const link = join(dir, "link.json");
  symlinkSync(target, link);
  assert.throws(() => writeFileSafely(link, "x"), /symbolic link/);
  assert.equal(readFileSync(target, "utf8"), "keep");
  writeFileSync(join(dir, "bad.json"), '{"version":2}');
  assert.equal(readSelectionState(join(dir, "bad.json")), undefined);
});

/** Runs the launcher with a stand-in for ipykernel that prints the selection's variables as JSON. */
function launch(
  opts: string[],
  env: Record<string, string> = {},
): { vars: Record<string, string | null>; stderr: string } {
  const dir = tmp("launcher");
  const launcher = join(dir, LAUNCHER_FILE_NAME);
  writeFileSync(launcher, LAUNCHER_SOURCE);
  const names = [
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "GPU_PILOT_KERNEL_DEVICES",
    "USER_VAR",
  ];
  const show = `import json, os; print(json.dumps({k: os.environ.get(k) for k in ${JSON.stringify(names)}}))`;
  const base = { ...process.env };
  for (const n of names) delete base[n];
  const r = spawnSync(python!, [launcher, ...opts, "--", "-c", show], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...base, ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  return { vars: JSON.parse(r.stdout) as Record<string, string | null>, stderr: r.stderr };
}

test(
  "launcher: the selection file decides CUDA_VISIBLE_DEVICES at each start; the user's variables stay",
  { skip: python ? false : "no python3" },
  () => {
    const dir = tmp("sel");
    const file = join(dir, "selection.json");
    writeSelectionState(file, ["1"], "nvidia");
    let r = launch(["--selection", file], { CUDA_VISIBLE_DEVICES: "0", USER_VAR: "mine" });
    assert.deepEqual(r.vars, {
      CUDA_VISIBLE_DEVICES: "1",
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      ROCR_VISIBLE_DEVICES: null,
      HIP_VISIBLE_DEVICES: null,
      GPU_PILOT_KERNEL_DEVICES: "1",
      USER_VAR: "mine",
    });
    assert.match(r.stderr, /GPU Pilot: kernel on GPU 1 \(CUDA_VISIBLE_DEVICES\)/);
    writeSelectionState(file, ["0", "2"], "nvidia");
    assert.equal(launch(["--selection", file]).vars.CUDA_VISIBLE_DEVICES, "0,2");
    // AMD: ROCR_VISIBLE_DEVICES alone, the HIP and CUDA variables removed (as a run does).
    writeSelectionState(file, ["1"], "amd");
    r = launch(["--selection", file], {
      HIP_VISIBLE_DEVICES: "0",
      CUDA_VISIBLE_DEVICES: "0",
      CUDA_DEVICE_ORDER: "FASTEST_FIRST",
    });
    assert.deepEqual(r.vars, {
      CUDA_VISIBLE_DEVICES: null,
      CUDA_DEVICE_ORDER: null,
      ROCR_VISIBLE_DEVICES: "1",
      HIP_VISIBLE_DEVICES: null,
      GPU_PILOT_KERNEL_DEVICES: "1",
      USER_VAR: null,
    });
  },
);

test(
  "launcher: an empty, missing, malformed or mixed selection leaves the environment as it is, and the kernel starts",
  { skip: python ? false : "no python3" },
  () => {
    const dir = tmp("sel");
    const file = join(dir, "selection.json");
    writeSelectionState(file, [], "nvidia");
    let r = launch(["--selection", file], { CUDA_VISIBLE_DEVICES: "3" });
    assert.equal(r.vars.CUDA_VISIBLE_DEVICES, "3");
    assert.equal(r.vars.GPU_PILOT_KERNEL_DEVICES, "");
    assert.match(r.stderr, /no GPU selected: the kernel keeps the environment's CUDA_VISIBLE_DEVICES \(3\)/);
    r = launch(["--selection", join(dir, "missing.json")]);
    assert.equal(r.vars.CUDA_VISIBLE_DEVICES, null);
    assert.match(r.stderr, /no selection file at/);
    writeFileSync(file, JSON.stringify({ version: 1, devices: ["1; rm -rf /"], vendor: "nvidia" }));
    r = launch(["--selection", file]);
    assert.equal(r.vars.CUDA_VISIBLE_DEVICES, null);
    assert.match(r.stderr, /not GPU ids: '1; rm -rf \/'/);
    writeFileSync(
      file,
      JSON.stringify({ version: 1, devices: ["0", "GPU-0123abcd-0123-4567-89ab-0123456789ab"], vendor: "nvidia" }),
    );
    assert.match(launch(["--selection", file]).stderr, /mixes GPU indices and UUIDs/);
    writeFileSync(file, "not json");
    assert.match(launch(["--selection", file]).stderr, /is not JSON/);
    // Pinned ids (gpu-pilot kernel install --gpus) ignore the file.
    assert.equal(launch(["--gpus", "2,3", "--vendor", "nvidia"]).vars.CUDA_VISIBLE_DEVICES, "2,3");
  },
);

/** Runs the launcher in `dir` (kernel.json's folder) with a stand-in for ipykernel; returns the kernel's pid and stderr. */
function launchIn(dir: string, opts: string[], env: Record<string, string> = {}): { pid: number; stderr: string } {
  const launcher = join(dir, LAUNCHER_FILE_NAME);
  if (!existsSync(launcher)) writeFileSync(launcher, LAUNCHER_SOURCE);
  const base = { ...process.env };
  for (const n of [
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "GPU_PILOT_KERNEL_DEVICES",
  ])
    delete base[n];
  const r = spawnSync(python!, [launcher, ...opts, "--", "-c", "import os; print(os.getpid())"], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...base, ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  return { pid: Number(r.stdout.trim()), stderr: r.stderr };
}

test(
  "launcher: each start is recorded in starts/<pid>.json (what it applied, what the kernel sees); records of gone processes are pruned",
  { skip: python ? false : "no python3" },
  () => {
    const dir = tmp("starts");
    const file = join(dir, "selection.json");
    writeSelectionState(file, ["1"], "nvidia");
    const first = launchIn(dir, ["--selection", file]);
    const [rec] = readKernelStarts(dir);
    assert.deepEqual(
      { ...rec, startedAt: undefined },
      { pid: first.pid, applied: "1", variable: "CUDA_VISIBLE_DEVICES", visible: "1", startedAt: undefined },
    );
    assert.match(rec.startedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // No GPU selected: nothing applied, the environment's value is what the kernel sees.
    writeSelectionState(file, [], "nvidia");
    const second = launchIn(dir, ["--selection", file], { CUDA_VISIBLE_DEVICES: "3" });
    assert.deepEqual(
      readKernelStarts(dir).map((s) => [s.pid, s.applied, s.visible]),
      [[second.pid, null, "3"]],
      "the first kernel's process is gone: its record too",
    );
    assert.deepEqual(kernelStartOf(dir, second.pid)?.visible, "3");
    // AMD pinned ids; a file that only looks like a record is left alone by the pruning.
    writeFileSync(join(dir, "starts", "1xjson"), "mine");
    const third = launchIn(dir, ["--gpus", "0,1", "--vendor", "amd"]);
    assert.deepEqual(kernelStartOf(dir, third.pid), {
      ...kernelStartOf(dir, third.pid)!,
      applied: "0,1",
      variable: "ROCR_VISIBLE_DEVICES",
      visible: "0,1",
    });
    // What is not a record is not read: junk, a link, a record whose pid is not its name.
    writeFileSync(join(dir, "starts", "12.json"), "{not json");
    symlinkSync(join(dir, "starts", `${third.pid}.json`), join(dir, "starts", "13.json"));
    writeFileSync(
      join(dir, "starts", "14.json"),
      JSON.stringify({
        version: 1,
        pid: 15,
        applied: null,
        variable: "CUDA_VISIBLE_DEVICES",
        visible: null,
        startedAt: "2099-01-01T00:00:00Z",
      }),
    );
    assert.deepEqual(
      readKernelStarts(dir).map((s) => s.pid),
      [third.pid],
    );
    assert.equal(readFileSync(join(dir, "starts", "1xjson"), "utf8"), "mine");
    assert.deepEqual(readKernelStarts(join(dir, "missing")), []);
  },
);

test(
  "launcher: a kernelspec folder where the record cannot be written (read-only, a file in the way) still starts the kernel",
  { skip: python ? false : "no python3" },
  () => {
    const dir = tmp("starts-ro");
    writeFileSync(join(dir, "starts"), "in the way");
    const r = launchIn(dir, ["--gpus", "1", "--vendor", "nvidia"]);
    assert.ok(r.pid > 0);
    assert.match(r.stderr, /GPU Pilot: could not record this start in .*starts \(.*\); the kernel starts all the same/);
    assert.deepEqual(readKernelStarts(dir), []);
    if (process.getuid?.() !== 0) {
      const ro = tmp("starts-ro2");
      writeFileSync(join(ro, LAUNCHER_FILE_NAME), LAUNCHER_SOURCE);
      chmodSync(ro, 0o555);
      assert.match(
        launchIn(ro, ["--gpus", "1", "--vendor", "nvidia"]).stderr,
        /could not record this start .*Permission denied/,
      );
    }
  },
);

test("install writes kernel.json and the launcher; a kernel GPU Pilot did not create is neither replaced nor removed", () => {
  const data = join(tmp("data"), "missing", "jupyter");
  const sel = { kind: "file" as const, file: "/state/selection.json" };
  const { dir, spec } = installKernel({ dataDir: data, name: "gp", env: ENV, selection: sel });
  assert.equal(dir, join(data, "kernels", "gp"));
  assert.deepEqual(spec, buildKernelJson(ENV, join(dir, LAUNCHER_FILE_NAME), sel));
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "kernel.json"), "utf8")).argv, [
    "/usr/bin/python3",
    join(dir, LAUNCHER_FILE_NAME),
    "--selection",
    "/state/selection.json",
    "--",
    "-m",
    "ipykernel_launcher",
    "-f",
    "{connection_file}",
  ]);
  assert.equal(
    JSON.parse(readFileSync(join(dir, "kernel.json"), "utf8")).display_name,
    "Python 3.12 (.venv) · GPU Pilot",
  );
  assert.equal(readFileSync(join(dir, LAUNCHER_FILE_NAME), "utf8"), LAUNCHER_SOURCE);
  // Again: replaced in place.
  installKernel({
    dataDir: data,
    name: "gp",
    env: ENV,
    selection: { kind: "pinned", devices: ["1"], vendor: "nvidia" },
  });
  assert.equal(
    JSON.parse(readFileSync(join(dir, "kernel.json"), "utf8")).display_name,
    "Python 3.12 (.venv) · GPU Pilot · GPU 1",
  );
  // Someone else's kernel.
  const other = join(data, "kernels", "python3");
  mkdirSync(other);
  writeFileSync(
    join(other, "kernel.json"),
    JSON.stringify({ argv: ["python3"], display_name: "Python 3", language: "python" }),
  );
  assert.throws(
    () => installKernel({ dataDir: data, name: "python3", env: ENV, selection: sel }),
    /GPU Pilot did not create it/,
  );
  assert.throws(() => removeKernel(data, "python3"), /was not created by GPU Pilot: not removed/);
  assert.ok(existsSync(join(other, "kernel.json")));
  symlinkSync(other, join(data, "kernels", "linked"));
  assert.throws(() => installKernel({ dataDir: data, name: "linked", env: ENV, selection: sel }), /symbolic link/);
  assert.deepEqual(
    listKernels(data).map((k) => k.name),
    ["gp"],
  );
  assert.deepEqual(
    listKernels(data, true).map((k) => k.name),
    ["gp", "python3"],
    "a link is no kernel folder of ours to list",
  );
  assert.throws(() => removeKernel(data, "../kernels"), /Not a Jupyter kernel name/);
  assert.throws(() => removeKernel(data, "nope"), /No kernel named "nope"/);
  // Its launcher's start records go with it.
  mkdirSync(join(dir, "starts"));
  writeFileSync(join(dir, "starts", "123.json"), "{}");
  assert.equal(removeKernel(data, "GP"), dir);
  assert.equal(existsSync(dir), false);
});

test("install into a data folder that cannot be made or written: a message naming the folder and JUPYTER_DATA_DIR", (t) => {
  const base = tmp("ro");
  const file = join(base, "file");
  writeFileSync(file, "");
  const sel = { kind: "file" as const, file: "/s" };
  assert.throws(
    () => installKernel({ dataDir: join(file, "jupyter"), name: "gp", env: ENV, selection: sel }),
    (e: unknown) =>
      e instanceof KernelError &&
      e.message.includes(join(file, "jupyter")) &&
      /is not a folder/.test(e.message) &&
      /JUPYTER_DATA_DIR/.test(e.message),
  );
  // Read-only: a folder without write bits stops a normal user; root passes those, so root tries /sys (read-only).
  const ro = join(base, "ro");
  mkdirSync(ro);
  chmodSync(ro, 0o555);
  const target = process.getuid?.() === 0 ? "/sys/gpu-pilot-test-jupyter" : join(ro, "jupyter");
  let writable = true;
  try {
    mkdirSync(target);
  } catch {
    writable = false;
  }
  if (writable) {
    t.skip(`${target} is writable here`);
    return;
  }
  assert.throws(
    () => installKernel({ dataDir: target, name: "gp", env: ENV, selection: sel }),
    (e: unknown) =>
      e instanceof KernelError &&
      /is read-only for this user|cannot be written/.test(e.message) &&
      e.message.includes(target),
  );
});

test("gpu-pilot kernel: usage errors exit 2, refusals exit 1 with the reason, list shows the installed kernel", async () => {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), stdin: async () => "" };
  const data = tmp("cli");
  const saved = process.env.JUPYTER_DATA_DIR;
  process.env.JUPYTER_DATA_DIR = data;
  try {
    assert.equal(await main(["kernel", "frob"], io), 2);
    assert.match(err.join(""), /unknown kernel command "frob"/);
    assert.equal(await main(["kernel", "install", "--name", "bad name"], io), 1);
    assert.match(err.join(""), /Not a Jupyter kernel name: "bad name"/);
    assert.equal(await main(["kernel", "install", "--gpus", "0,x"], io), 2);
    assert.match(err.join(""), /--gpus: Not a GPU index or UUID: "x"/);
    assert.equal(await main(["kernel", "install", "--python", join(data, "no-python")], io), 1);
    assert.match(err.join(""), /Cannot start .*no-python/);
    installKernel({
      dataDir: data,
      name: "gp",
      env: ENV,
      selection: { kind: "pinned", devices: ["1"], vendor: "nvidia" },
    });
    assert.equal(await main(["kernel", "list"], io), 0);
    assert.match(out.join(""), /^gp\tPython 3\.12 \(\.venv\) · GPU Pilot · GPU 1\tpinned to GPU 1\t/m);
    assert.equal(await main(["kernel", "remove", "gp"], io), 0);
    assert.equal(await main(["kernel", "remove", "gp"], io), 1);
    assert.match(err.join(""), /No kernel named "gp"/);
  } finally {
    if (saved === undefined) delete process.env.JUPYTER_DATA_DIR;
    else process.env.JUPYTER_DATA_DIR = saved;
  }
});

const jupyterPython = ["/usr/bin/python3", "python3"].find(
  (p) => spawnSync(p, ["-c", "import ipykernel"], { timeout: 30_000, stdio: "ignore" }).status === 0,
);

test(
  "gpu-pilot kernel install: makes the selection file when missing (no GPU selected), keeps one that exists",
  { skip: jupyterPython ? false : "no python3 with ipykernel", timeout: 120_000 },
  async () => {
    const dir = tmp("cli-install");
    const saved = {
      JUPYTER_DATA_DIR: process.env.JUPYTER_DATA_DIR,
      GPU_PILOT_STATE_DIR: process.env.GPU_PILOT_STATE_DIR,
    };
    Object.assign(process.env, { JUPYTER_DATA_DIR: join(dir, "data"), GPU_PILOT_STATE_DIR: join(dir, "state") });
    const out: string[] = [];
    const io = { out: (s: string) => void out.push(s), err: (s: string) => void out.push(s), stdin: async () => "" };
    try {
      assert.equal(await main(["kernel", "install", "--python", jupyterPython!, "--name", "One"], io), 0, out.join(""));
      const file = join(dir, "state", "selection.json");
      assert.deepEqual(readSelectionState(file)?.devices, []);
      assert.match(
        out.join(""),
        /Installed kernel "one" \(Python 3\.\d+.* · GPU Pilot\)[^]*made now with no GPU selected/,
      );
      writeSelectionState(file, ["1"], "nvidia");
      assert.equal(await main(["kernel", "install", "--python", jupyterPython!, "--name", "two"], io), 0);
      assert.deepEqual(readSelectionState(file)?.devices, ["1"], "an existing selection is kept");
      assert.deepEqual(
        listKernels(join(dir, "data")).map((k) => k.name),
        ["one", "two"],
      );
      assert.equal(
        await main(["kernel", "install", "--python", jupyterPython!, "--gpus", "2", "--name", "two"], io),
        0,
      );
      assert.equal(listKernels(join(dir, "data"))[1].gpuPilot?.selection.kind, "pinned");
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  },
);
