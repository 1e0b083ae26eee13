/**
 * gpu-pilot_runOnGpus outside VS Code (`gpu-pilot mcp --allow-run`): plans the launch with the run
 * command's planner (common/src/run/plan.ts `planLaunch`: program, vendor, argument array and
 * environment; no shell, nothing expanded), starts it with execa in its own process group, keeps the
 * tail of its output and stops the group when it runs past its time.
 */
import { dirname } from "node:path";
import { loadExeca, killIfStarted } from "../../../common/src/gpu/nvidiaSmi";
import { type GpuVendor, runEnvironment, type LaunchSpec } from "../../../common/src/run/launch";
import { planLaunch, type PlanInventory } from "../../../common/src/run/plan";
import { findProgram, scriptProblem } from "../../../common/src/run/which";
import {
  killAllGroups,
  liveGroupCount,
  OWN_GROUP,
  signalGroup,
  trackGroup,
} from "../../../common/src/run/processGroup";
import type { AgentLauncher, RunEnd } from "../../../common/src/agents/core";

/** Output kept from a run, characters (its end). */
const KEEP_CHARS = 256 * 1024;

/** What to run. */
export interface RunRequest {
  file: string;
  launcher: AgentLauncher;
  deviceIds: string[];
  args: string[];
  timeoutSeconds: number;
  /** Python interpreter: absolute path or bare name on PATH. */
  interpreter: string;
  /** Working directory (absolute). */
  cwd: string;
  /** The GPUs read for this request, with the vendor of the tool that read them. */
  inventory: PlanInventory;
  /** SIGTERM → SIGKILL delay on timeout, ms (default 3000). */
  killAfterMs?: number;
}

/**
 * Runs `req` to its end.
 * @returns the launch, the vendor it was planned for, how it ended and its (tail of) interleaved
 *   stdout/stderr; or `error` in words when the planner refuses the launch (the file is not an
 *   absolute path to a regular file, the interpreter is not there, ...).
 */
export async function runToEnd(
  req: RunRequest,
): Promise<{ spec: LaunchSpec; vendor: GpuVendor; end: RunEnd; output: string } | { error: string }> {
  const plan = planLaunch({
    file: req.file,
    cwd: req.cwd || dirname(req.file),
    launcher: req.launcher,
    deviceIds: req.deviceIds,
    inventory: req.inventory,
    interpreter: req.interpreter,
    scriptArgs: req.args,
    hostEnv: process.env,
    find: findProgram,
    scriptProblem,
  });
  if (!plan.ok) return { error: plan.message };
  const { spec, vendor } = plan;
  const { execa } = await loadExeca();
  let output = "";
  const keep = (chunk: Buffer | string) => {
    output += chunk.toString();
    if (output.length > 2 * KEEP_CHARS) output = output.slice(-KEEP_CHARS);
  };
  const group = OWN_GROUP;
  const child = execa(spec.command, spec.args, {
    cwd: spec.cwd,
    env: runEnvironment(process.env, spec),
    extendEnv: false,
    detached: group,
    stdin: "ignore",
    buffer: false,
    reject: false,
  });
  // Remembered until it ends: the server's shutdown (stopAllRuns) and exit stop the group.
  const forget = trackGroup(group ? child.pid : undefined);
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let timedOut = false;
  const signalAll = (signal: NodeJS.Signals) => {
    // signalGroup never signals without a pid: kill(-0) would reach this server's own group.
    if (group) signalGroup(child.pid, signal);
    else killIfStarted(child, signal);
  };
  let killTimer: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    signalAll("SIGTERM");
    killTimer = setTimeout(() => signalAll("SIGKILL"), req.killAfterMs ?? 3000);
  }, req.timeoutSeconds * 1000);
  const r = await child;
  forget();
  clearTimeout(timer);
  if (killTimer) clearTimeout(killTimer);
  const startError =
    r.failed && r.exitCode === undefined && r.signal === undefined
      ? r.cause instanceof Error
        ? r.cause.message
        : r.shortMessage
      : undefined;
  const end: RunEnd = {
    exitCode: r.exitCode ?? null,
    ...(r.signal ? { signal: r.signal } : {}),
    ...(startError !== undefined ? { error: startError } : {}),
    ...(timedOut ? { timedOut: true } : {}),
  };
  return { spec, vendor, end, output: output.length > KEEP_CHARS ? output.slice(-KEEP_CHARS) : output };
}

/**
 * Stops every run still going (the server's shutdown): SIGTERM to each process group, SIGKILL to
 * those still there after `graceMs` ms. Resolves when the last signal is sent.
 */
export async function stopAllRuns(graceMs = 2000): Promise<void> {
  if (killAllGroups("SIGTERM") === 0) return;
  for (const end = Date.now() + graceMs; liveGroupCount() > 0 && Date.now() < end;)
    await new Promise((r) => setTimeout(r, 50));
  killAllGroups("SIGKILL");
}
