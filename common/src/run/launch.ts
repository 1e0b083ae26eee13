/**
 * What to run for "Run Active File on Selected GPUs" and "Run Active File With...": the program,
 * its argument array and its environment, for every launcher. No `vscode` import; runActiveFile.ts
 * runs a {@link LaunchSpec} in a Task with a CustomExecution (processTerminal.ts: execa with an
 * argument array, never a shell string, and no `${...}` resolved by VS Code).
 *
 * | launcher     | command line                                                                 | env added                              |
 * |--------------|------------------------------------------------------------------------------|----------------------------------------|
 * | `python`     | `<python> <file> <args>`                                                     | CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER |
 * | `torchrun`   | `torchrun --standalone --nproc_per_node=<n> <file> <args>`                   | CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER |
 * | `accelerate` | `accelerate launch --num_processes=<n> --gpu_ids=<ids> <file> <args>`        | CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER |
 * | `deepspeed`  | `deepspeed --include localhost:<indices> <file> <args>` (†)                  | CUDA_DEVICE_ORDER only                 |
 * | `custom`     | `gpuPilot.run.customArgs` (`${file}` `${gpus}` `${count}` `${python}`) <args> | CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER |
 * | `docker`     | `docker run --rm --gpus "device=<ids>" -v <dir>:<dir> -w <dir> <image> python <file> <args>` (†) | none            |
 * | `slurm`      | `srun --gpus=<n> <python> <file> <args>` (†)                                 | CUDA_DEVICE_ORDER only                 |
 *
 * (†) These get the selection through their own flags only, never through CUDA_VISIBLE_DEVICES: an
 * inherited CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER is removed from their environment
 * ({@link LaunchSpec.unset}, applied by {@link runEnvironment}), and CUDA_DEVICE_ORDER is set only
 * as the table says.
 *
 * On an AMD ROCm machine ({@link LaunchRequest.vendor} `amd`: amd-smi or rocm-smi present, no
 * nvidia-smi; gpu/vendor.ts) the selection goes into ROCR_VISIBLE_DEVICES alone, the variable AMD
 * recommends on Linux: python, torchrun and custom get `ROCR_VISIBLE_DEVICES=<ids>` and no
 * CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER; an inherited CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES or
 * GPU_DEVICE_ORDINAL is removed, since HIP applies those after ROCR and would index into what ROCR
 * left (ROCm documentation, "GPU isolation techniques"; GPU031). accelerate gets no `--gpu_ids`
 * (it would write them into CUDA_VISIBLE_DEVICES), docker is refused (`--gpus` is NVIDIA's), and
 * deepspeed and slurm are unchanged (they set the variables per rank themselves).
 *
 * torchrun, accelerate and deepspeed are found by {@link LaunchRequest.program}; when it is absent
 * they run as `<python> -m torch.distributed.run` / `accelerate.commands.launch` /
 * `deepspeed.launcher.runner`.
 */
import { basename, isAbsolute } from "node:path";
import { type GpuKey, indexOfEntry, isDeviceId, validateDeviceIds } from "../gpu/selection";

/** The launchers of `gpuPilot.run.launcher`. */
export type LauncherKind = "python" | "torchrun" | "accelerate" | "deepspeed" | "custom" | "docker" | "slurm";

/** Every {@link LauncherKind}, in the order the launcher quick pick shows them. */
export const LAUNCHERS: readonly LauncherKind[] = [
  "python",
  "torchrun",
  "accelerate",
  "deepspeed",
  "custom",
  "docker",
  "slurm",
];

/** True when `v` names a launcher. */
export function isLauncher(v: unknown): v is LauncherKind {
  return typeof v === "string" && (LAUNCHERS as readonly string[]).includes(v);
}

/**
 * Launchers that must not see CUDA_VISIBLE_DEVICES (nor an inherited CUDA_DEVICE_ORDER): both are
 * removed from their environment ({@link LaunchSpec.unset}).
 */
export const UNSET_SELECTION: ReadonlySet<LauncherKind> = new Set(["deepspeed", "docker", "slurm"]);

/** Launchers that start one process per GPU (or `nproc`) on this machine. */
export const MULTI_PROCESS: ReadonlySet<LauncherKind> = new Set(["torchrun", "accelerate", "deepspeed"]);

/** Launchers whose program is searched for ({@link LaunchRequest.program}), with the module run by `python -m` when not found. */
export const LAUNCHER_PROGRAMS: Readonly<Partial<Record<LauncherKind, { name: string; module?: string }>>> = {
  torchrun: { name: "torchrun", module: "torch.distributed.run" },
  accelerate: { name: "accelerate", module: "accelerate.commands.launch" },
  deepspeed: { name: "deepspeed", module: "deepspeed.launcher.runner" },
  docker: { name: "docker" },
  slurm: { name: "srun" },
};

/** The placeholders of `gpuPilot.run.customArgs`. */
export const CUSTOM_PLACEHOLDERS = ["file", "gpus", "count", "python"] as const;

/** Input of {@link buildLaunch}. */
export interface LaunchRequest {
  /** Default `python`. */
  launcher?: LauncherKind;
  /** Python executable: an absolute path, or a bare name looked up on PATH (`python3`). */
  interpreter: string;
  /** The script to run: an absolute path. */
  file: string;
  /** Working directory: an absolute path (the workspace folder, else the file's folder). Docker mounts it. */
  cwd: string;
  /** CUDA_VISIBLE_DEVICES entries (indices or GPU-/MIG- UUIDs), in the order CUDA should number them. */
  deviceIds: readonly string[];
  /** Arguments after the script (`gpuPilot.run.args` plus the remembered prompt). */
  scriptArgs?: readonly string[];
  /** Processes for torchrun / accelerate; default (and 0): one per GPU. */
  nproc?: number;
  /** Launcher `slurm` with no GPU selected (a login node may have none): how many GPUs srun asks for. */
  gpuCount?: number;
  /**
   * The launcher's program (torchrun, accelerate, deepspeed, docker, srun) as found on PATH or next to
   * the interpreter. Absent: torchrun/accelerate/deepspeed run through `<python> -m <module>`,
   * docker and srun by their bare names.
   */
  program?: string;
  /** `gpuPilot.run.customArgs` (launcher `custom`): the whole command line, one element per argument. */
  customArgs?: readonly string[];
  /** `gpuPilot.run.dockerImage` (launcher `docker`). */
  dockerImage?: string;
  /** The GPUs of this machine: deepspeed's `--include` needs indices, so UUIDs are translated through them. */
  gpus?: readonly GpuKey[];
  /** Extra environment (`gpuPilot.run.env`, already expanded); CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER in it are dropped (on AMD also the ROCm selection variables). */
  extraEnv?: Readonly<Record<string, string>>;
  /** Whose GPUs these are (gpu/vendor.ts `detectVendor`); default `nvidia`. */
  vendor?: GpuVendor;
}

/** The GPU vendor a launch is for: NVIDIA (CUDA_VISIBLE_DEVICES) or AMD ROCm (ROCR_VISIBLE_DEVICES). */
export type GpuVendor = "nvidia" | "amd";

/**
 * The ROCm variables that select devices after (or instead of) ROCR_VISIBLE_DEVICES: removed from an
 * AMD run's environment so that ROCR_VISIBLE_DEVICES alone decides (ROCm documentation, "GPU
 * isolation techniques": HIP_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL index into what ROCR left;
 * HIP read CUDA_VISIBLE_DEVICES as an alias until its 2026 documentation dropped it, ROCm/rocm-systems#10473).
 */
export const AMD_SELECTION_VARS: readonly string[] = [
  "ROCR_VISIBLE_DEVICES",
  "HIP_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
  "CUDA_VISIBLE_DEVICES",
  "CUDA_DEVICE_ORDER",
];

/**
 * The process to start: `command args...` in `cwd`, with the inherited environment less `unset`,
 * plus `env` ({@link runEnvironment}).
 */
export interface LaunchSpec {
  launcher: LauncherKind;
  command: string;
  args: string[];
  cwd: string;
  /** Variables added to (or replacing in) the inherited environment. */
  env: Record<string, string>;
  /** Variables removed from the inherited environment before `env` is added (the launchers of {@link UNSET_SELECTION}: the selection's two). */
  unset: string[];
  /** The CUDA_VISIBLE_DEVICES value of the selection (set in `env` only by launchers that use it). */
  visibleDevices: string;
  /** Task name, e.g. `train.py on GPU 1` or `train.py on GPU 0,1 (torchrun)`. */
  title: string;
  /** Things worth a line in the log (a module fallback, a dropped variable). */
  notes: string[];
}

/** A request {@link buildLaunch} refuses; `message` says why, in words for a notification. */
export class LaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LaunchError";
  }
}

/** A variable name a process environment may hold. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SELECTION_VARS = new Set(["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"]);

/**
 * The CUDA_VISIBLE_DEVICES value of validated entries: joined with `,`, re-checked so that it holds
 * only indices (digits) or GPU-/MIG- UUIDs, never spaces, quotes or shell characters.
 * @throws LaunchError when the list is empty, an entry is not a device id, or indices and UUIDs are mixed.
 */
export function visibleDevicesValue(deviceIds: readonly string[]): string {
  let ids: string[];
  try {
    ids = validateDeviceIds(deviceIds);
  } catch (e) {
    throw new LaunchError((e as Error).message);
  }
  if (ids.length === 0) throw new LaunchError("No GPU selected.");
  const numeric = ids.filter((id) => /^\d+$/.test(id)).length;
  if (numeric !== 0 && numeric !== ids.length) {
    throw new LaunchError(`Mixes GPU indices and UUIDs (${ids.join(",")}): CUDA_VISIBLE_DEVICES takes one kind.`);
  }
  const value = ids.join(",");
  if (!value.split(",").every(isDeviceId))
    throw new LaunchError(`Not a CUDA_VISIBLE_DEVICES value: ${JSON.stringify(value)}.`);
  return value;
}

/**
 * nvidia-smi indices of the entries, for DeepSpeed's `--include localhost:<indices>` (it takes slot
 * numbers, not UUIDs). GPU UUIDs are translated through `gpus`.
 * @throws LaunchError for a MIG instance (DeepSpeed schedules whole GPUs) or a UUID not in `gpus`.
 */
export function deepspeedIndices(ids: readonly string[], gpus: readonly GpuKey[]): number[] {
  return ids.map((id) => {
    if (id.startsWith("MIG-")) {
      throw new LaunchError(
        `DeepSpeed's --include takes whole GPUs, not the MIG instance ${id}: use torchrun or python for MIG instances.`,
      );
    }
    const index = indexOfEntry(id, gpus);
    if (index === undefined)
      throw new LaunchError(`${id} is not a GPU of this machine, so it has no index for DeepSpeed's --include.`);
    return index;
  });
}

/**
 * Replaces `${file}`, `${gpus}`, `${count}` and `${python}` in each element of a custom template;
 * each element stays exactly one argument (no splitting, no shell).
 * @throws LaunchError for an unknown `${...}` placeholder or an empty template.
 */
export function expandCustomArgs(
  template: readonly string[],
  values: Readonly<Record<(typeof CUSTOM_PLACEHOLDERS)[number], string>>,
): string[] {
  if (template.length === 0 || template[0].trim() === "") {
    throw new LaunchError(
      'gpuPilot.run.customArgs is empty: set it to the command line, one argument per element, e.g. ["${python}", "${file}"].',
    );
  }
  return template.map((arg) =>
    arg.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
      if ((CUSTOM_PLACEHOLDERS as readonly string[]).includes(name)) return values[name as keyof typeof values];
      throw new LaunchError(
        `Unknown placeholder ${whole} in gpuPilot.run.customArgs; known: ${CUSTOM_PLACEHOLDERS.map((p) => "${" + p + "}").join(", ")}.`,
      );
    }),
  );
}

/**
 * Expands `${env:NAME}` in the values of `gpuPilot.run.env` from `parent` (the extension host's
 * environment; a missing variable gives ""), e.g. `{"PATH": "/opt/bin:${env:PATH}"}`.
 * @throws LaunchError for a name that is not a variable name, or a value that is not a string or holds a NUL.
 */
export function expandEnv(
  env: Readonly<Record<string, unknown>>,
  parent: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name))
      throw new LaunchError(`gpuPilot.run.env: ${JSON.stringify(name)} is not a variable name.`);
    if (typeof value !== "string" || value.includes("\0"))
      throw new LaunchError(`gpuPilot.run.env: the value of ${name} must be a string without NUL.`);
    out[name] = value.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, v: string) => parent[v] ?? "");
  }
  return out;
}

/**
 * Splits the remembered argument prompt into arguments the way a POSIX shell splits words, without
 * any expansion: whitespace separates, `'...'` is literal, `"..."` allows `\"` and `\\`, a backslash
 * outside quotes escapes the next character. `$`, `*`, `;`, `|` and the rest stay literal text.
 * @throws LaunchError for an unterminated quote.
 */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new LaunchError(`Unterminated ' in the arguments: ${text}`);
      cur += text.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\" && (text[j + 1] === '"' || text[j + 1] === "\\")) j++;
        cur += text[j];
      }
      if (j >= text.length) throw new LaunchError(`Unterminated " in the arguments: ${text}`);
      i = j;
      inWord = true;
    } else if (c === "\\" && i + 1 < text.length) {
      cur += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

function checkPath(p: string, what: string): void {
  if (!isAbsolute(p) || p.includes("\0")) throw new LaunchError(`Not an absolute ${what} path: ${p}`);
}

function checkProgram(p: string, what: string): string {
  const t = p.trim();
  if (t === "" || /[\0\r\n]/.test(t)) throw new LaunchError(`Not a usable ${what}: ${JSON.stringify(p)}.`);
  return t;
}

/**
 * What the selection `visible` (a checked CUDA_VISIBLE_DEVICES value) adds to a process's environment
 * on `vendor`'s machine, and which inherited variables it removes: on NVIDIA CUDA_VISIBLE_DEVICES and
 * CUDA_DEVICE_ORDER=PCI_BUS_ID; on AMD ROCR_VISIBLE_DEVICES alone, the rest of
 * {@link AMD_SELECTION_VARS} removed (see the file comment).
 */
function vendorVariables(visible: string, vendor: GpuVendor): { env: Record<string, string>; unset: string[] } {
  return vendor === "amd"
    ? { env: { ROCR_VISIBLE_DEVICES: visible }, unset: AMD_SELECTION_VARS.filter((k) => k !== "ROCR_VISIBLE_DEVICES") }
    : { env: { CUDA_VISIBLE_DEVICES: visible, CUDA_DEVICE_ORDER: "PCI_BUS_ID" }, unset: [] };
}

/**
 * The environment a run on the GPUs `deviceIds` gets from the selection with the launchers that pass
 * it through the environment (python, torchrun, custom; {@link buildLaunch}): the variables set, and
 * the inherited ones removed. The public API's `getRunEnvironment` (client/src/publicApi.ts).
 * @throws LaunchError for an empty or malformed selection ({@link visibleDevicesValue}).
 */
export function selectionVariables(
  deviceIds: readonly string[],
  vendor: GpuVendor = "nvidia",
): { env: Record<string, string>; unset: string[] } {
  return vendorVariables(visibleDevicesValue(deviceIds), vendor);
}

/** Docker image reference: no whitespace, and never starting with `-` (it would be read as an option). */
const DOCKER_IMAGE = /^[A-Za-z0-9][A-Za-z0-9._\-/:@]*$/;

/**
 * Builds the launch of `file` on the chosen GPUs with the chosen launcher (see the table at the top
 * of this file). CUDA_DEVICE_ORDER=PCI_BUS_ID makes CUDA number GPUs like nvidia-smi.
 *
 * @throws LaunchError when there is no GPU entry, an entry is not an index or GPU-/MIG- UUID,
 *   indices and UUIDs are mixed, a path is not absolute, the interpreter or program is unusable,
 *   `nproc` is not a positive integer, a custom template or docker image is missing or malformed,
 *   or deepspeed gets an entry without an index.
 */
export function buildLaunch(req: LaunchRequest): LaunchSpec {
  const launcher = req.launcher ?? "python";
  // srun allocates GPUs on another node: a count is enough there.
  const countOnly = launcher === "slurm" && req.deviceIds.length === 0;
  if (countOnly && (!Number.isInteger(req.gpuCount) || (req.gpuCount ?? 0) < 1))
    throw new LaunchError("No GPU selected and no GPU count for srun.");
  const visible = countOnly ? "" : visibleDevicesValue(req.deviceIds);
  const ids = countOnly ? [] : visible.split(",");
  const interpreter = checkProgram(req.interpreter, "Python interpreter");
  checkPath(req.file, "file");
  checkPath(req.cwd, "folder");
  const scriptArgs = [...(req.scriptArgs ?? [])];
  if (scriptArgs.some((a) => typeof a !== "string" || a.includes("\0")))
    throw new LaunchError("A script argument is not a string without NUL.");
  const count = countOnly ? req.gpuCount! : ids.length;
  const nproc = req.nproc === undefined || req.nproc === 0 ? count : req.nproc;
  if (!Number.isInteger(nproc) || nproc < 1) throw new LaunchError(`Not a number of processes: ${String(req.nproc)}.`);

  const amd = req.vendor === "amd";
  if (amd && launcher === "docker") {
    throw new LaunchError(
      "The docker launcher passes GPUs with --gpus, which is NVIDIA's; on this AMD ROCm machine use python, torchrun or a custom command line (docker needs --device=/dev/kfd --device=/dev/dri there).",
    );
  }
  const notes: string[] = [];
  const env: Record<string, string> = {};
  const dropped = amd ? new Set([...SELECTION_VARS, ...AMD_SELECTION_VARS]) : SELECTION_VARS;
  for (const [k, v] of Object.entries(req.extraEnv ?? {})) {
    if (dropped.has(k)) {
      notes.push(`gpuPilot.run.env sets ${k}; ignored: the GPU selection decides it.`);
      continue;
    }
    env[k] = v;
  }
  const selectionEnv = vendorVariables(visible, amd ? "amd" : "nvidia").env;
  const name = basename(req.file);
  const onGpus = `${name} on GPU ${visible}`;
  const prog = LAUNCHER_PROGRAMS[launcher];
  const program =
    req.program !== undefined ? checkProgram(req.program, `${prog?.name ?? launcher} program`) : undefined;
  /** `[command, ...prefix]` of a launcher that may run as `python -m <module>`. */
  const launcherHead = (): [string, string[]] => {
    if (program) return [program, []];
    notes.push(
      `${prog!.name} was not found on PATH or next to ${interpreter}: running ${interpreter} -m ${prog!.module}.`,
    );
    return [interpreter, ["-m", prog!.module!]];
  };

  let command: string;
  let args: string[];
  let title = `${onGpus} (${launcher})`;
  let spec: Record<string, string> = selectionEnv;
  switch (launcher) {
    case "python":
      command = interpreter;
      args = [req.file, ...scriptArgs];
      title = onGpus;
      break;
    case "torchrun": {
      const [cmd, pre] = launcherHead();
      command = cmd;
      args = [...pre, "--standalone", `--nproc_per_node=${nproc}`, req.file, ...scriptArgs];
      break;
    }
    case "accelerate": {
      const [cmd, pre] = launcherHead();
      command = cmd;
      // On AMD, --gpu_ids would become CUDA_VISIBLE_DEVICES in each process: ROCR_VISIBLE_DEVICES already narrowed the GPUs.
      args = [
        ...pre,
        ...(program ? ["launch"] : []),
        `--num_processes=${nproc}`,
        ...(amd ? [] : [`--gpu_ids=${visible}`]),
        req.file,
        ...scriptArgs,
      ];
      break;
    }
    case "deepspeed": {
      // DeepSpeed ignores CUDA_VISIBLE_DEVICES when --include is given and sets it per rank itself
      // from the slot numbers, so it gets nvidia-smi indices and no CUDA_VISIBLE_DEVICES.
      const indices = deepspeedIndices(ids, req.gpus ?? []);
      const [cmd, pre] = launcherHead();
      command = cmd;
      args = [...pre, "--include", `localhost:${indices.join(",")}`, req.file, ...scriptArgs];
      spec = { CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
      if (req.nproc && req.nproc !== count)
        notes.push(`DeepSpeed starts one process per included GPU: gpuPilot.run.nproc (${req.nproc}) is not used.`);
      title = `${name} on GPU ${indices.join(",")} (deepspeed)`;
      break;
    }
    case "custom": {
      const argv = expandCustomArgs(req.customArgs ?? [], {
        file: req.file,
        gpus: visible,
        count: String(count),
        python: interpreter,
      });
      command = checkProgram(argv[0], "program in gpuPilot.run.customArgs");
      // Script arguments follow the template, as with every other launcher.
      args = [...argv.slice(1), ...scriptArgs];
      if (args.some((a) => a.includes("\0"))) throw new LaunchError("gpuPilot.run.customArgs holds a NUL character.");
      break;
    }
    case "docker": {
      const image = (req.dockerImage ?? "").trim();
      if (image === "")
        throw new LaunchError("Set gpuPilot.run.dockerImage to the image to run in (e.g. pytorch/pytorch:latest).");
      if (!DOCKER_IMAGE.test(image)) throw new LaunchError(`Not a Docker image reference: ${JSON.stringify(image)}.`);
      if (req.cwd.includes(":"))
        throw new LaunchError(`Docker's -v cannot mount a folder whose path holds ':' (${req.cwd}).`);
      command = program ?? "docker";
      // Docker reads the --gpus value as CSV, so a list of devices must be one quoted CSV field:
      // the argument is `"device=0,1"` with the double quotes (a shell user types '"device=0,1"').
      // Without them Docker splits at the comma and takes only the first GPU (or fails).
      args = [
        "run",
        "--rm",
        "--gpus",
        `"device=${visible}"`,
        "-v",
        `${req.cwd}:${req.cwd}`,
        "-w",
        req.cwd,
        image,
        "python",
        req.file,
        ...scriptArgs,
      ];
      // Nothing is passed into the container: --gpus decides what it sees.
      spec = {};
      break;
    }
    case "slurm":
      command = program ?? "srun";
      args = [`--gpus=${count}`, interpreter, req.file, ...scriptArgs];
      // Slurm allocates the GPUs on the node it picks and sets CUDA_VISIBLE_DEVICES there.
      spec = { CUDA_DEVICE_ORDER: "PCI_BUS_ID" };
      title = `${name} via srun (${count} GPU${count === 1 ? "" : "s"})`;
      break;
  }
  const unset = UNSET_SELECTION.has(launcher)
    ? [...SELECTION_VARS]
    : amd
      ? AMD_SELECTION_VARS.filter((k) => !(k in spec))
      : [];
  return {
    launcher,
    command,
    args,
    cwd: req.cwd,
    env: { ...env, ...spec },
    unset,
    visibleDevices: visible,
    title,
    notes,
  };
}

/**
 * Variables of the extension host that are VS Code's own, not the user's: a program started from it
 * must not inherit them (`ELECTRON_RUN_AS_NODE=1` makes any Electron program it starts, `code`
 * included, run as plain Node). VS Code's integrated terminal removes the same kinds.
 */
const HOST_ONLY_VAR = /^(?:ELECTRON_.+|VSCODE_(?!IPC_HOOK_CLI$).+)$/;

/**
 * The whole environment of a run: `parent` (the extension host's environment) without VS Code's own
 * variables and without `spec.unset`, then `spec.env`. `PYTHONUNBUFFERED=1` is added unless `parent`
 * or `spec.env` sets it: the run's output goes through a pipe, not a tty, and Python would otherwise
 * hold it back in 8 KiB blocks. Nothing in any value is expanded.
 */
export function runEnvironment(
  parent: Readonly<Record<string, string | undefined>>,
  spec: Pick<LaunchSpec, "env" | "unset">,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (typeof v === "string" && !HOST_ONLY_VAR.test(k)) out[k] = v;
  for (const k of spec.unset) delete out[k];
  if (out.PYTHONUNBUFFERED === undefined && spec.env.PYTHONUNBUFFERED === undefined) out.PYTHONUNBUFFERED = "1";
  return { ...out, ...spec.env };
}

/**
 * How a finished run reads in the log and the notification, from its exit code or the signal that
 * ended it (both undefined: unknown).
 */
export function describeExit(
  title: string,
  exitCode: number | undefined,
  signal?: string,
): { ok: boolean; message: string } {
  if (exitCode === 0) return { ok: true, message: `${title}: finished (exit code 0).` };
  if (signal !== undefined) return { ok: false, message: `${title}: stopped by ${signal}.` };
  if (exitCode === undefined)
    return { ok: false, message: `${title}: ended without an exit code (stopped or terminal closed).` };
  return { ok: false, message: `${title}: failed with exit code ${exitCode}.` };
}
