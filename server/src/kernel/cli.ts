/**
 * `gpu-pilot kernel`: GPU Pilot Jupyter kernels for JupyterLab, classic Jupyter and the VS Code
 * Jupyter extension (common/src/kernel/kernelspec.ts says what is written where).
 *
 *   gpu-pilot kernel install [--python PATH] [--gpus IDS] [--name NAME]
 *   gpu-pilot kernel list [--all] [--json]
 *   gpu-pilot kernel remove NAME
 *
 * Exit codes: 0 done, 1 refused or failed (the reason on stderr: no ipykernel, a read-only data
 * folder, a kernel GPU Pilot did not create), 2 bad usage. server/src/cli.ts loads this module by
 * `import()` for `gpu-pilot kernel` only (in dist/cli.js, its code runs then).
 */
import { findProgram } from "../../../common/src/run/which";
import { detectVendor } from "../../../common/src/gpu/vendor";
import { LaunchError, visibleDevicesValue } from "../../../common/src/run/launch";
import {
  defaultKernelName,
  installKernel,
  KernelError,
  type KernelSelection,
  listKernels,
  removeKernel,
  validateKernelName,
} from "../../../common/src/kernel/kernelspec";
import { kernelEnvironmentOf, resolveJupyterDataDir } from "../../../common/src/kernel/pythonProbe";
import { ensureSelectionFile, selectionFileOf } from "../../../common/src/kernel/selectionFile";

/** Where the command writes. */
export interface KernelIo {
  out(s: string): void;
  err(s: string): void;
}

export const KERNEL_USAGE = `usage: gpu-pilot kernel install [--python PATH] [--gpus IDS] [--name NAME]
       gpu-pilot kernel list [--all] [--json]
       gpu-pilot kernel remove NAME
  install   write a Jupyter kernel for a Python environment (it needs ipykernel) into the Jupyter data
            folder ($JUPYTER_DATA_DIR, else \`jupyter --data-dir\`): each start or restart of the kernel
            puts it on the GPUs selected in VS Code at that moment (the selection file
            $GPU_PILOT_STATE_DIR/selection.json, else $XDG_STATE_HOME/gpu-pilot/ or ~/.local/state/gpu-pilot/)
    --python PATH   the environment's interpreter (default: python3 on PATH)
    --gpus IDS      pin these GPUs (nvidia-smi indices or GPU-/MIG- UUIDs, comma-separated) instead of
                    following the editor's selection
    --name NAME     the kernel's name (letters, digits, '.', '_', '-'; default gpu-pilot-<env>-<hash>)
  list      the GPU Pilot kernels in the data folder (--all: every kernel; --json: as JSON)
  remove    remove a kernel GPU Pilot installed (any other kernel is refused)`;

class Usage extends Error {}

/** `--flag VALUE` pairs and positionals of `argv`; flags must be among `known`, booleans among `bools`. */
function parseFlags(
  argv: readonly string[],
  known: readonly string[],
  bools: readonly string[] = [],
): { flags: Map<string, string>; rest: string[] } {
  const flags = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith("--")) {
      rest.push(a);
      continue;
    }
    const [name, inline] = a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, undefined];
    if (bools.includes(name)) {
      flags.set(name, "true");
      continue;
    }
    if (!known.includes(name)) throw new Usage(`unknown option ${name}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === "") throw new Usage(`${name} needs a value`);
    flags.set(name, value);
  }
  return { flags, rest };
}

/** This machine's GPU vendor, as runs decide it (client/src/gpu/vendor.ts). */
const machineVendor = () => detectVendor((n) => findProgram(n, { pathEnv: process.env.PATH })).vendor;

/** The selection of an install: pinned `--gpus` (validated, vendor of this machine) or the selection file. */
function selectionOf(gpus: string | undefined): KernelSelection {
  if (gpus === undefined) return { kind: "file", file: selectionFileOf() };
  let value: string;
  try {
    value = visibleDevicesValue(gpus.split(","));
  } catch (e) {
    if (e instanceof LaunchError) throw new Usage(`--gpus: ${e.message}`);
    throw e;
  }
  return { kind: "pinned", devices: value.split(","), vendor: machineVendor() };
}

async function install(argv: readonly string[], io: KernelIo): Promise<number> {
  const { flags, rest } = parseFlags(argv, ["--python", "--gpus", "--name"]);
  if (rest.length) throw new Usage(`unexpected argument ${rest[0]}`);
  const selection = selectionOf(flags.get("--gpus"));
  const name = flags.has("--name") ? validateKernelName(flags.get("--name")!) : undefined;
  const env = await kernelEnvironmentOf(flags.get("--python") ?? "python3");
  const data = await resolveJupyterDataDir();
  const kernelName = name ?? defaultKernelName(env, selection);
  const { dir, spec } = installKernel({ dataDir: data.dir, name: kernelName, env, selection });
  io.out(`Installed kernel "${kernelName}" (${String(spec.display_name)}) in ${dir}\n`);
  if (selection.kind === "pinned") {
    io.out(`It runs on GPU ${selection.devices.join(",")} (pinned).\n`);
    return 0;
  }
  let made: boolean;
  try {
    made = ensureSelectionFile(selection.file, machineVendor());
  } catch (e) {
    throw new KernelError(
      `The kernel is installed, but the GPU selection file ${selection.file} cannot be made (${(e as Error).message}): until it can, the kernel keeps the environment's GPUs.`,
    );
  }
  io.out(
    `It follows the GPU selection in ${selection.file} each time it starts or restarts${made ? " (made now with no GPU selected: the kernel keeps the environment's GPUs until GPU Pilot in VS Code writes a selection there)" : ""}.\n`,
  );
  return 0;
}

async function list(argv: readonly string[], io: KernelIo): Promise<number> {
  const { flags, rest } = parseFlags(argv, [], ["--all", "--json"]);
  if (rest.length) throw new Usage(`unexpected argument ${rest[0]}`);
  const data = await resolveJupyterDataDir();
  const kernels = listKernels(data.dir, flags.has("--all"));
  if (flags.has("--json")) {
    io.out(
      JSON.stringify(
        {
          dataDir: data.dir,
          kernels: kernels.map((k) => ({
            name: k.name,
            dir: k.dir,
            displayName: k.displayName,
            gpuPilot: k.gpuPilot ?? null,
          })),
        },
        null,
        2,
      ) + "\n",
    );
    return 0;
  }
  if (kernels.length === 0) {
    io.out(`No ${flags.has("--all") ? "" : "GPU Pilot "}kernel in ${data.dir}/kernels.\n`);
    return 0;
  }
  for (const k of kernels) {
    const gp = k.gpuPilot;
    const how = !gp
      ? "not GPU Pilot's"
      : gp.selection.kind === "file"
        ? `follows ${gp.selection.file}`
        : `pinned to GPU ${gp.selection.devices.join(",")}`;
    io.out(`${k.name}\t${k.displayName}\t${how}\t${k.dir}\n`);
  }
  return 0;
}

async function remove(argv: readonly string[], io: KernelIo): Promise<number> {
  const { rest } = parseFlags(argv, []);
  if (rest.length !== 1) throw new Usage("remove takes one kernel name");
  const data = await resolveJupyterDataDir();
  io.out(`Removed ${removeKernel(data.dir, rest[0])}\n`);
  return 0;
}

/**
 * Runs `gpu-pilot kernel ARGS...`.
 * @returns the exit code (0 done, 1 refused or failed, 2 bad usage); never throws for the user's mistakes.
 */
export async function kernelMain(argv: readonly string[], io: KernelIo): Promise<number> {
  const [sub, ...args] = argv;
  if (sub === undefined || sub === "--help" || sub === "-h" || args.includes("--help")) {
    io.out(KERNEL_USAGE + "\n");
    return sub === undefined ? 2 : 0;
  }
  const commands = { install, list, remove };
  const run = Object.hasOwn(commands, sub) ? commands[sub as keyof typeof commands] : undefined;
  try {
    if (!run) throw new Usage(`unknown kernel command "${sub}"`);
    return await run(args, io);
  } catch (e) {
    if (e instanceof Usage) {
      io.err(`gpu-pilot kernel: ${e.message}\n${KERNEL_USAGE}\n`);
      return 2;
    }
    if (e instanceof KernelError) {
      io.err(`gpu-pilot kernel: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
