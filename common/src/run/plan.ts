/**
 * The one launch planner of every run: the editor's run command (client/src/run/runActiveFile.ts),
 * the language-model tool gpu-pilot_runOnGpus (client/src/agents/lmTools.ts) and the MCP server's
 * run (server/src/mcp/run.ts) each gather their inputs (settings, selection, inventory, interpreter)
 * and call {@link planLaunch}; it finds the launcher's program, decides the GPU vendor, builds the
 * argument array and environment with launch.ts `buildLaunch`, and refuses, with the same sentence
 * for every face, a script that is not a regular file and a program to start that is not there (the
 * interpreter, a launcher, a custom command), instead of a start that fails with ENOENT.
 * test/unit/common/run/launchPlanFaces.test.ts runs the three faces against one another.
 *
 * No `vscode` import. Nothing is started; the only looks at the machine are through
 * {@link PlanInput.find} and {@link PlanInput.scriptProblem} (file-system lookups: which.ts
 * `findProgram` and `scriptProblem` in production).
 */
import { isAbsolute, resolve } from "node:path";
import { detectVendor } from "../gpu/vendor";
import type { GpuKey } from "../gpu/selection";
import {
  buildLaunch,
  expandEnv,
  type GpuVendor,
  LAUNCHER_PROGRAMS,
  LaunchError,
  type LauncherKind,
  type LaunchSpec,
} from "./launch";
import type { FindOptions } from "./which";

/** The GPUs a run is planned against, with whose tool read them. */
export interface PlanInventory {
  /** The machine's GPUs (index and UUID): deepspeed's `--include` translates UUIDs through them. */
  readonly gpus: readonly GpuKey[];
  /** `amd` when amd-smi or rocm-smi read them (common/src/gpu/amdSmi.ts); absent: nvidia-smi did. */
  readonly vendor?: GpuVendor;
}

/** What a run face gathers for {@link planLaunch}; every field is explicit, nothing is read from the process. */
export interface PlanInput {
  /** The script: an absolute path. */
  file: string;
  /** Working directory: an absolute path (the workspace folder, else the file's folder). */
  cwd: string;
  /** The launcher (`gpuPilot.run.launcher`, the launcher picked, or the agent's `launcher`). */
  launcher: LauncherKind;
  /** The selection: CUDA_VISIBLE_DEVICES entries (indices or GPU-/MIG- UUIDs), in order. */
  deviceIds: readonly string[];
  /** Launcher `slurm` with nothing selected: how many GPUs srun asks for. */
  gpuCount?: number;
  /** The last inventory; undefined when none was read (the vendor is then found from the tools on PATH). */
  inventory: PlanInventory | undefined;
  /** Python executable: an absolute path or a bare name on PATH (`python3`). */
  interpreter: string;
  /** Arguments after the script. */
  scriptArgs?: readonly string[];
  /** `gpuPilot.run.nproc` (0 or absent: one process per GPU). */
  nproc?: number;
  /** `gpuPilot.run.customArgs` (launcher `custom`). */
  customArgs?: readonly string[];
  /** `gpuPilot.run.dockerImage` (launcher `docker`). */
  dockerImage?: string;
  /** `gpuPilot.run.env` as the user wrote it (values may hold `${env:NAME}`); absent: none. */
  runEnv?: Readonly<Record<string, unknown>>;
  /** The environment the run inherits (the extension host's or the MCP server's): `${env:NAME}` and PATH come from it. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /**
   * The absolute path of an executable, or undefined (which.ts `findProgram`): a bare name is
   * searched (next to an absolute interpreter, then on `pathEnv`), an absolute path is checked as it is.
   */
  find: (name: string, opts: FindOptions) => string | undefined;
  /** Why the script cannot be run (`no such file`, `not a regular file (a folder)`), or undefined when it is a regular file (which.ts `scriptProblem`). */
  scriptProblem: (file: string) => string | undefined;
}

/** What {@link planLaunch} decided: the launch and the vendor it is for, or why nothing runs (a sentence for the user). */
export type LaunchPlan = { ok: true; spec: LaunchSpec; vendor: GpuVendor } | { ok: false; message: string };

/**
 * The vendor of a run: the inventory's (`amd` when AMD's tool read it, else `nvidia`); without an
 * inventory, from the management tools on the run's PATH (gpu/vendor.ts `detectVendor`).
 */
export function runVendor(
  inventory: PlanInventory | undefined,
  find: PlanInput["find"],
  pathEnv: string | undefined,
): GpuVendor {
  if (inventory) return inventory.vendor ?? "nvidia";
  return detectVendor((name) => find(name, { pathEnv })).vendor;
}

/**
 * The launcher's program (torchrun, accelerate, deepspeed, docker, srun) next to the interpreter or
 * on the run's PATH; undefined for launchers without one, or when a `python -m` module stands in.
 * @throws LaunchError when a launcher with no module fallback (docker, srun) is not found.
 */
function launcherProgram(input: PlanInput, pathEnv: string | undefined, pathFromSetting: boolean): string | undefined {
  const prog = LAUNCHER_PROGRAMS[input.launcher];
  if (!prog) return undefined;
  const program = input.find(prog.name, { pathEnv, interpreter: input.interpreter });
  if (!program && !prog.module) {
    throw new LaunchError(
      `${prog.name} was not found on PATH${pathFromSetting ? " (gpuPilot.run.env's PATH)" : ""}: install it or choose another launcher.`,
    );
  }
  return program;
}

/**
 * The program `spec` starts, as the process start will look for it: a bare name on the run's PATH,
 * a path with a separator against the run's folder.
 * @throws LaunchError when it is not there.
 */
function checkCommand(spec: LaunchSpec, input: PlanInput, pathEnv: string | undefined, pathFromSetting: boolean): void {
  const { command } = spec;
  const bare = !(process.platform === "win32" ? /[\\/]/ : /\//).test(command);
  const path = bare || isAbsolute(command) ? command : resolve(spec.cwd, command);
  if (input.find(path, { pathEnv })) return;
  const interpreter = command === input.interpreter.trim();
  const what = interpreter ? "The Python interpreter" : "The program";
  const where = bare
    ? `was not found on PATH${pathFromSetting ? " (gpuPilot.run.env's PATH)" : ""}`
    : "is not an executable file";
  const advice = interpreter ? "install Python or choose another interpreter" : "install it or choose another launcher";
  throw new LaunchError(`${what} ${command} ${where}: ${advice}.`);
}

/**
 * Plans one run (see the file comment). Pure apart from {@link PlanInput.find} and
 * {@link PlanInput.scriptProblem}.
 * @returns `ok: true` with the {@link LaunchSpec} (command, argument array, environment to add and
 *   to remove) and the vendor; `ok: false` with the reason when the launch is refused: a malformed
 *   `gpuPilot.run.env`, a missing docker or srun, anything launch.ts `buildLaunch` refuses (no GPU,
 *   a bad entry, docker on AMD...), a script that is not a regular file, or a program to start
 *   (the interpreter, a launcher's program, a custom command) that is not there.
 * @throws only on a bug (an error that is not a LaunchError).
 */
export function planLaunch(input: PlanInput): LaunchPlan {
  try {
    const extraEnv = expandEnv(input.runEnv ?? {}, input.hostEnv);
    const pathEnv = extraEnv.PATH ?? input.hostEnv.PATH;
    const program = launcherProgram(input, pathEnv, extraEnv.PATH !== undefined);
    const vendor = runVendor(input.inventory, input.find, pathEnv);
    const spec = buildLaunch({
      launcher: input.launcher,
      interpreter: input.interpreter,
      file: input.file,
      cwd: input.cwd,
      deviceIds: input.deviceIds,
      gpuCount: input.gpuCount,
      scriptArgs: input.scriptArgs,
      nproc: input.nproc,
      program,
      customArgs: input.customArgs,
      dockerImage: input.dockerImage,
      gpus: input.inventory?.gpus ?? [],
      extraEnv,
      vendor,
    });
    const problem = input.scriptProblem(input.file);
    if (problem) throw new LaunchError(`Cannot run ${input.file}: ${problem}.`);
    checkCommand(spec, input, pathEnv, extraEnv.PATH !== undefined);
    return { ok: true, spec, vendor };
  } catch (e) {
    if (e instanceof LaunchError) return { ok: false, message: e.message };
    throw e;
  }
}
