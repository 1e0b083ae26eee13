/**
 * GPU Pilot for coding agents in VS Code: the language-model tools of
 * `contributes.languageModelTools` registered through `vscode.lm.registerTool`, and the
 * `gpu-pilot mcp` server registered through `vscode.lm.registerMcpServerDefinitionProvider`.
 * Both APIs are newer than this extension's engine floor (1.91): they are looked up at run time and
 * skipped (one log line) where missing; the few types used are declared here.
 *
 * - gpu-pilot_listGpus / gpu-pilot_pickGpus read the GPU view's inventory (GpuMonitor; refreshed
 *   when older than {@link FRESH_MS}) and the `gpuPilot.pick.*` policy; pickGpus changes nothing.
 * - gpu-pilot_checkFile asks the language server (`gpuPilot/checkFile`): the client bundles no parser.
 * - gpu-pilot_runOnGpus plans its launch with common/src/run/plan.ts `planLaunch` (as the run command
 *   and the MCP server do) and runs it through the run command's Task (runActiveFile.ts `startTask`), after
 *   VS Code's confirmation (`prepareInvocation`) in a chat request, or GPU Pilot's own modal one
 *   when invoked without a chat request; never in Restricted Mode.
 *
 * `gpuPilot.agentTools.enabled` (default true) registers or unregisters all of them, live.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import type { CheckFileResult } from "../../../common/src/lsp/protocol";
import * as config from "../config";
import { describeEntries } from "../gpu/environment";
import type { Inventory } from "../../../common/src/gpu/nvidiaSmi";
import { DEFAULT_PICK_POLICY, normalizePolicy, type PickPolicy } from "../../../common/src/gpu/policy";
import { othersClaims, pickAndClaim } from "../../../common/src/gpu/claimPick";
import { log } from "../log";
import { resolveInterpreter } from "../run/interpreter";
import { planLaunch } from "../../../common/src/run/plan";
import type { ProcessExit } from "../run/processTerminal";
import { type RunHost, startTask } from "../run/runActiveFile";
import * as runSettings from "../run/settings";
import { findProgram, scriptProblem } from "../../../common/src/run/which";
import {
  checkCheckInput,
  checkListInput,
  checkPickInput,
  checkRunInput,
  formatFindings,
  formatGpuList,
  formatPick,
  formatRunResult,
  confirmationMarkdown,
  notRunnable,
  resolveRunGpus,
  runConfirmation,
  TOOL,
  type RunEnd,
  type RunInput,
  type ToolName,
} from "../../../common/src/agents/core";
import { type AgentTool, lmApi } from "./register";

// The registration (at activation, in dist/client.js) is register.ts; these names stay importable from here.
export {
  ENABLED_KEY,
  MCP_PROVIDER_ID,
  mcpDefinitionArgs,
  registerAgentTools,
  type AgentTool,
  type PreparedToolInvocation,
  type ToolInvocationOptions,
} from "./register";

/** The button of GPU Pilot's own run confirmation (a call outside a chat request). */
export const RUN_ANSWER = "Run";
/** An inventory older than this is re-read before a tool answers, ms. */
export const FRESH_MS = 2000;
/** The text a tool returns, as a `LanguageModelToolResult` of one text part (plain `{ content: [{ value }] }` where the classes are missing). */
export function textResult(text: string): unknown {
  const { LanguageModelToolResult: Result, LanguageModelTextPart: Part } = lmApi();
  if (Result && Part) return new Result([new Part(text)]);
  return { content: [{ value: text }] };
}

/** What the tools need from the extension (ctx.ts): the run host plus the language server's check. */
export interface AgentHost extends RunHost {
  /** `gpuPilot/checkFile` through the language client; `ok: false` when the server is not running. */
  checkFile(path: string): Promise<CheckFileResult>;
}

/** Why a tool call failed: thrown from `invoke` (VS Code reports the message to the model). */
export class AgentToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentToolError";
  }
}

const fail = (message: string): never => {
  throw new AgentToolError(message);
};

async function freshInventory(host: AgentHost): Promise<Inventory> {
  const inv = host.monitor.inventory;
  if (!inv || Date.now() - inv.takenAt > FRESH_MS) await host.monitor.refresh();
  const now = host.monitor.inventory;
  if (!now || host.monitor.state !== "ok")
    return fail(
      `nvidia-smi could not be read: ${host.monitor.problem || "no answer"}. (gpuPilot.nvidiaSmiPath names the nvidia-smi GPU Pilot runs.)`,
    );
  return now;
}

/** The file a tool names: absolute, or relative to the first workspace folder. */
function resolvePath(p: string): string {
  if (path.isAbsolute(p)) return path.normalize(p);
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!root) return fail(`"${p}" is relative and no folder is open: give an absolute path`);
  return path.join(root, p);
}

const processDetails = (host: AgentHost, inv: Inventory) =>
  inv.apps.map((a) => host.monitor.processOf(a.pid)).filter((d): d is NonNullable<typeof d> => d !== undefined);

const policy = () => normalizePolicy({ ...DEFAULT_PICK_POLICY, ...config.pickPolicy() });

/** How long the agent's picked GPUs stay claimed for it without a run on them: 10 min. */
const AGENT_HOLD_MS = 10 * 60_000;

/** gpu-pilot_pickGpus: picks, claims (purpose `agent`, kept 10 min for the agent's run), waiting up to `waitSeconds`. */
async function pickForAgent(
  host: AgentHost,
  p: PickPolicy & { waitSeconds: number },
  token: vscode.CancellationToken,
): Promise<string> {
  const abort = new AbortController();
  token.onCancellationRequested(() => abort.abort());
  let inv: Inventory | undefined;
  const read = async () => {
    inv = await freshInventory(host);
    return { gpus: inv.gpus, apps: inv.apps, details: processDetails(host, inv) };
  };
  const ledger = host.claims?.ledger;
  const r = await pickAndClaim(ledger, read, p, "agent", "language-model tool", {
    waitMs: p.waitSeconds * 1000,
    signal: abort.signal,
  });
  if (r.claims.length > 0) host.claims?.adopt(r.claims, AGENT_HOLD_MS);
  const held = r.claims.length > 0 ? "this VS Code window for 10 minutes (a run on them keeps them)" : undefined;
  return formatPick(r.result, inv as Inventory, p, config.selectBy(), {
    ...(held ? { held } : {}),
    ...(r.note ? { note: r.note } : {}),
  }).text;
}

/** A run's tail kept in memory, characters. */
const KEEP_CHARS = 256 * 1024;

/**
 * Runs a checked request through the run command's Task and waits for its end.
 * @throws AgentToolError when the file is not a Python file on disk, a GPU is not on this machine,
 *   or the launch is refused (e.g. torchrun not installed).
 */
async function runForAgent(host: AgentHost, input: RunInput, token: vscode.CancellationToken): Promise<string> {
  if (!vscode.workspace.isTrusted)
    fail(
      "Refused: the workspace is not trusted (Restricted Mode), and running a file executes its code. The user can trust the workspace to allow runs.",
    );
  const file = resolvePath(input.path);
  const refused = notRunnable(file);
  if (refused) fail(refused);
  const uri = vscode.Uri.file(file);
  const inv = await freshInventory(host);
  const ids = resolveRunGpus(input.gpus, inv, config.selectBy());
  if ("error" in ids) fail(ids.error);
  const deviceIds = (ids as { value: string[] }).value;
  const interpreter = await resolveInterpreter(uri);
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  const plan = planLaunch({
    file,
    cwd: folder?.uri.fsPath ?? path.dirname(file),
    launcher: input.launcher,
    deviceIds,
    inventory: inv,
    interpreter: interpreter.path,
    scriptArgs: input.args,
    runEnv: runSettings.runEnv(uri),
    hostEnv: process.env,
    find: findProgram,
    scriptProblem,
  });
  if (!plan.ok) return fail(plan.message);
  const { spec, vendor } = plan;
  let output = "";
  let resolveEnd!: (e: ProcessExit) => void;
  const ended = new Promise<ProcessExit>((r) => (resolveEnd = r));
  log.info(
    `Agent tool ${TOOL.runOnGpus}: running ${file} with ${input.launcher} on ${spec.visibleDevices} (confirmed by the user).`,
  );
  const execution = await startTask(host, spec, file, folder, interpreter.source, {
    output: (t) => {
      output += t;
      if (output.length > 2 * KEEP_CHARS) output = output.slice(-KEEP_CHARS);
    },
    exit: resolveEnd,
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    execution?.terminate();
  }, input.timeoutSeconds * 1000);
  const cancel = token.onCancellationRequested(() => execution?.terminate());
  const exit = await ended;
  clearTimeout(timer);
  cancel.dispose();
  const end: RunEnd = {
    exitCode: exit.exitCode ?? null,
    ...(exit.signal ? { signal: exit.signal } : {}),
    ...(exit.error !== undefined ? { error: exit.error } : {}),
    ...(timedOut ? { timedOut: true } : {}),
  };
  return formatRunResult(
    {
      file,
      launcher: input.launcher,
      visibleDevices: spec.visibleDevices,
      vendor,
      command: [spec.command, ...spec.args],
    },
    end,
    output,
    input.timeoutSeconds,
  );
}

/**
 * The four tools, by name. Each `invoke` returns {@link textResult}; bad input or a failure throws
 * {@link AgentToolError} with a sentence the model can act on.
 */
export function createAgentTools(host: AgentHost): Record<ToolName, AgentTool> {
  return {
    [TOOL.listGpus]: {
      async invoke(options) {
        const c = checkListInput(options.input);
        if ("error" in c) fail(c.error);
        const inv = await freshInventory(host);
        return textResult(formatGpuList(inv, processDetails(host, inv), policy(), othersClaims(host.claims?.ledger)));
      },
    },
    [TOOL.pickGpus]: {
      async invoke(options, token) {
        const c = checkPickInput(options.input, policy());
        if ("error" in c) return fail(c.error);
        return textResult(await pickForAgent(host, c.value, token));
      },
    },
    [TOOL.checkFile]: {
      async invoke(options) {
        const c = checkCheckInput(options.input);
        if ("error" in c) return fail(c.error);
        const file = resolvePath(c.value.path);
        const r = await host.checkFile(file);
        if (!r.ok) return fail(`${TOOL.checkFile}: ${r.error}`);
        const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
        const shown = root && file.startsWith(root + path.sep) ? path.relative(root, file) : file;
        return textResult(
          formatFindings(shown, r.findings) +
            (r.source === "editor" ? "\n(checked the open editor's text, unsaved changes included)" : ""),
        );
      },
    },
    [TOOL.runOnGpus]: {
      async prepareInvocation(options) {
        const c = checkRunInput(options.input);
        // Bad input: no confirmation; invoke reports the error without running anything.
        if ("error" in c) return { invocationMessage: "Checking the run request" };
        const inv = host.monitor.inventory;
        let file = c.value.path;
        try {
          file = resolvePath(file);
        } catch {
          /* invoke says why */
        }
        const gpuText = `GPU ${c.value.gpus.join(", ")}${inv ? ` (${describeEntries(c.value.gpus, inv)})` : ""}`;
        const { title, message } = runConfirmation(file, c.value.launcher, gpuText, c.value.args);
        return {
          invocationMessage: `Running ${path.basename(file)} on ${gpuText}`,
          confirmationMessages: { title, message: new vscode.MarkdownString(confirmationMarkdown(message)) },
        };
      },
      async invoke(options, token) {
        const c = checkRunInput(options.input);
        if ("error" in c) return fail(c.error);
        // In a chat request (toolInvocationToken set) VS Code has shown prepareInvocation's
        // confirmation before calling invoke. Called through vscode.lm.invokeTool without a chat
        // request, VS Code 1.139 shows none (measured in the e2e suite), so GPU Pilot asks itself.
        if (options.toolInvocationToken === undefined) {
          if (!vscode.workspace.isTrusted)
            fail(
              "Refused: the workspace is not trusted (Restricted Mode), and running a file executes its code. The user can trust the workspace to allow runs.",
            );
          let file = c.value.path;
          try {
            file = resolvePath(file);
          } catch {
            /* runForAgent says why */
          }
          const inv = host.monitor.inventory;
          const { title, message } = runConfirmation(
            file,
            c.value.launcher,
            `GPU ${c.value.gpus.join(", ")}${inv ? ` (${describeEntries(c.value.gpus, inv)})` : ""}`,
            c.value.args,
          );
          let answer: string | undefined;
          let why = "";
          try {
            answer = await vscode.window.showWarningMessage(title, { modal: true, detail: message }, RUN_ANSWER);
          } catch (e) {
            why = ` (the confirmation could not be shown: ${(e as Error).message})`;
          }
          if (answer !== RUN_ANSWER) fail(`The user did not confirm the run: nothing was run.${why}`);
        }
        return textResult(await runForAgent(host, c.value, token));
      },
    },
  };
}
