/**
 * The launcher of a GPU Pilot kernel: a small Python script written beside
 * kernel.json ({@link LAUNCHER_FILE_NAME}) that the kernelspec's `argv` runs with the environment's
 * own interpreter. Each time Jupyter starts or restarts the kernel it
 * 1. reads the GPU selection: from the selection file (`--selection FILE`, selectionFile.ts) as the
 *    editor last wrote it, or from the ids pinned at install time (`--gpus IDS --vendor VENDOR`);
 * 2. applies it to its own environment as a run does (common/src/run/launch.ts): on NVIDIA
 *    `CUDA_VISIBLE_DEVICES=<ids>` and `CUDA_DEVICE_ORDER=PCI_BUS_ID`; on AMD ROCm
 *    `ROCR_VISIBLE_DEVICES=<ids>` alone, with an inherited HIP_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL,
 *    CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER removed (launch.ts AMD_SELECTION_VARS);
 *    `GPU_PILOT_KERNEL_DEVICES` records what it applied (empty when it applied nothing);
 * 3. records this start in `starts/<pid>.json` beside itself ({@link START_RECORDS_DIR}; the shape is
 *    common/src/kernel/startRecord.ts's): the process id, what it applied, the visible-devices value
 *    the kernel gets and the time, so that the editor's status bar can say which GPUs a notebook's
 *    kernel started with without asking the kernel. Records of processes that are gone are removed
 *    (POSIX), and at most {@link MAX_START_RECORDS} are kept. A folder it cannot write (a read-only
 *    kernelspec folder) costs a line on stderr, never the start;
 * 4. becomes `python -m ipykernel_launcher -f {connection_file}` with `os.execve` (same process id,
 *    so Jupyter's interrupt and kill signals reach the kernel). On Windows, where execve starts a
 *    new process and ends this one, the kernel runs as a child and its exit code is passed on.
 *
 * Everything else in the environment is the one Jupyter gave the kernel (the user's variables, a
 * `.env` the Jupyter extension applied, the kernelspec's `env`): only the selection's variables are
 * decided by the launcher. No selection file, an unreadable or malformed one, an empty selection or
 * entries that are not GPU ids: the environment is left as it is (a line on the kernel's stderr
 * says why), as a terminal gets no variable for an empty selection (client/src/gpu/environment.ts).
 * The kernel always starts: a launcher that refused would leave the user with a dead kernel and a
 * message in a log they rarely see.
 */

/** The launcher's file name inside the kernelspec folder. */
export const LAUNCHER_FILE_NAME = "gpu_pilot_launcher.py";

/** The folder beside the launcher where each start is recorded (`<pid>.json`). */
export const START_RECORDS_DIR = "starts";
/** The most start records kept in {@link START_RECORDS_DIR} (the newest). */
export const MAX_START_RECORDS = 32;

/** The variable the launcher sets to the devices it applied (empty: none); item 2's probe reads it. */
export const KERNEL_DEVICES_VAR = "GPU_PILOT_KERNEL_DEVICES";

const HEX_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
/**
 * A CUDA_VISIBLE_DEVICES entry, as a pattern Python's `re` and JavaScript read alike: the same as
 * common/src/gpu/selection.ts DEVICE_ID (a test checks they agree).
 */
export const DEVICE_ID_PATTERN = `^(?:\\d{1,4}|GPU-${HEX_UUID}|MIG-(?:${HEX_UUID}|GPU-${HEX_UUID}/\\d+/\\d+))$`;

/** The launcher's Python source (Python 3.6+, standard library only). */
export const LAUNCHER_SOURCE = `"""GPU Pilot kernel launcher, written by GPU Pilot beside kernel.json: do not edit (reinstall instead).

Each start or restart of the kernel applies the GPU selection, then runs the kernel in this process:
  python ${LAUNCHER_FILE_NAME} (--selection FILE | --gpus IDS --vendor nvidia|amd) -- -m ipykernel_launcher -f CONNECTION_FILE
"""
import json
import os
import re
import sys
import time

DEVICE_ID = re.compile(r"${DEVICE_ID_PATTERN}")
AMD_VARS = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")
MAX_BYTES = 65536
STARTS = "${START_RECORDS_DIR}"
MAX_STARTS = ${MAX_START_RECORDS}
RECORD_NAME = re.compile(r"^[0-9]{1,10}\\.json$")


def note(message):
    sys.stderr.write("GPU Pilot: " + message + "\\n")
    sys.stderr.flush()


def read_selection(path):
    """(devices, vendor) from the selection file, or (None, why)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None, "no selection file at %s (the editor writes it when GPUs are selected)" % path
    except OSError as e:
        return None, "cannot read %s (%s)" % (path, e)
    if len(data) > MAX_BYTES:
        return None, "%s is over %d bytes" % (path, MAX_BYTES)
    try:
        state = json.loads(data.decode("utf-8"))
    except ValueError as e:
        return None, "%s is not JSON (%s)" % (path, e)
    if not isinstance(state, dict) or state.get("version") != 1 or not isinstance(state.get("devices"), list):
        return None, "%s is not a GPU Pilot selection file (version 1)" % path
    return (state["devices"], state.get("vendor", "nvidia")), None


def apply(env, devices, vendor):
    """Sets the selection's variables in env; returns what was done, in words."""
    bad = [d for d in devices if not isinstance(d, str) or not DEVICE_ID.match(d)]
    if bad:
        return "not GPU ids: %s; the environment is left as it is" % ", ".join(repr(d) for d in bad)
    if vendor not in ("nvidia", "amd"):
        return "unknown vendor %r; the environment is left as it is" % (vendor,)
    numeric = [d for d in devices if d.isdigit()]
    if numeric and len(numeric) != len(devices):
        return "the selection mixes GPU indices and UUIDs (%s); the environment is left as it is" % ",".join(devices)
    if not devices:
        return "no GPU selected: the kernel keeps the environment's CUDA_VISIBLE_DEVICES (%s)" % env.get("CUDA_VISIBLE_DEVICES", "unset")
    value = ",".join(devices)
    if vendor == "amd":
        for name in AMD_VARS:
            env.pop(name, None)
        env["ROCR_VISIBLE_DEVICES"] = value
    else:
        env["CUDA_VISIBLE_DEVICES"] = value
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    env["${KERNEL_DEVICES_VAR}"] = value
    return "kernel on GPU %s (%s)" % (value, "ROCR_VISIBLE_DEVICES" if vendor == "amd" else "CUDA_VISIBLE_DEVICES")


def selection_of(opts):
    """(devices, vendor) from the options before --, or (None, why)."""
    if len(opts) == 2 and opts[0] == "--selection":
        return read_selection(opts[1])
    if len(opts) == 4 and opts[0] == "--gpus" and opts[2] == "--vendor":
        return ([d for d in opts[1].split(",") if d], opts[3]), None
    return None, "unexpected launcher options %r" % (opts,)


def gone(pid):
    """True when no process has this id (POSIX; on Windows nothing is pruned by id)."""
    if os.name == "nt":
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def prune(folder):
    """Removes the records of processes that are gone, then the oldest beyond MAX_STARTS - 1."""
    kept = []
    for name in os.listdir(folder):
        if not RECORD_NAME.match(name):
            continue
        path = os.path.join(folder, name)
        if gone(int(name[:-5])):
            os.unlink(path)
        else:
            kept.append((os.lstat(path).st_mtime, path))
    kept.sort()
    for _, path in kept[:max(0, len(kept) - MAX_STARTS + 1)]:
        os.unlink(path)


def record_start(env, vendor):
    """Writes starts/<pid>.json beside this launcher (through a temporary file); a failure is a note."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), STARTS)
    variable = "ROCR_VISIBLE_DEVICES" if vendor == "amd" else "CUDA_VISIBLE_DEVICES"
    record = {"version": 1, "pid": os.getpid(), "applied": env.get("${KERNEL_DEVICES_VAR}") or None, "variable": variable,
              "visible": env.get(variable), "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    tmp = os.path.join(folder, ".%d.tmp" % os.getpid())
    try:
        if not os.path.isdir(folder):
            os.mkdir(folder, 0o755)
        prune(folder)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        os.replace(tmp, os.path.join(folder, "%d.json" % os.getpid()))
    except OSError as e:
        note("could not record this start in %s (%s); the kernel starts all the same" % (folder, e))


def main(argv):
    if "--" not in argv:
        note("usage: %s (--selection FILE | --gpus IDS --vendor VENDOR) -- ARGS..." % os.path.basename(__file__))
        return 2
    sep = argv.index("--")
    env = dict(os.environ)
    env["${KERNEL_DEVICES_VAR}"] = ""
    selection, why = selection_of(argv[:sep])
    note(why if selection is None else apply(env, selection[0], selection[1]))
    record_start(env, selection[1] if selection is not None else "nvidia")
    cmd = [sys.executable] + argv[sep + 1:]
    if os.name == "nt":
        import subprocess
        return subprocess.call(cmd, env=env)
    os.execve(sys.executable, cmd, env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
`;
