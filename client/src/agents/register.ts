/**
 * Registers the agent tools at activation: the language-model tools of
 * `contributes.languageModelTools` through `vscode.lm.registerTool` and the `gpu-pilot mcp` server
 * through `vscode.lm.registerMcpServerDefinitionProvider`, while `gpuPilot.agentTools.enabled` is
 * true; what the tools do is lmTools.ts (and common/src/agents/core.ts). Both APIs are newer than
 * this extension's engine floor (1.91): they are looked up at run time and skipped (one log line)
 * where missing.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import * as config from "../config";
import { log } from "../log";
import type { ToolName } from "../../../common/src/agents/toolNames";

/** The setting that turns every agent tool (and the MCP registration) off. */
export const ENABLED_KEY = `${config.SECTION}.agentTools.enabled`;
/** The MCP server definition provider's id (package.json `contributes.mcpServerDefinitionProviders`). */
export const MCP_PROVIDER_ID = "gpuPilot.mcp";

// ---- The parts of the vscode.lm API used here (VS Code 1.95+ for tools, 1.101+ for MCP) ----

/** `vscode.LanguageModelToolInvocationOptions<T>`. */
export interface ToolInvocationOptions<T> {
  input: T;
  toolInvocationToken?: unknown;
}
/** `vscode.PreparedToolInvocation`. */
export interface PreparedToolInvocation {
  invocationMessage?: string;
  confirmationMessages?: { title: string; message: string | vscode.MarkdownString };
}
/** `vscode.LanguageModelTool<T>`, as GPU Pilot implements it: results are text. */
export interface AgentTool {
  prepareInvocation?(
    options: { input: unknown },
    token: vscode.CancellationToken,
  ): Promise<PreparedToolInvocation | undefined>;
  invoke(options: ToolInvocationOptions<unknown>, token: vscode.CancellationToken): Promise<unknown>;
}
interface LmApi {
  registerTool?(name: string, tool: AgentTool): vscode.Disposable;
  registerMcpServerDefinitionProvider?(
    id: string,
    provider: {
      onDidChangeMcpServerDefinitions?: vscode.Event<void>;
      provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[];
    },
  ): vscode.Disposable;
}
export interface LmClasses {
  lm?: LmApi;
  LanguageModelToolResult?: new (content: unknown[]) => unknown;
  LanguageModelTextPart?: new (value: string) => unknown;
  McpStdioServerDefinition?: new (
    label: string,
    command: string,
    args?: string[],
    env?: Record<string, string | number | null>,
    version?: string,
  ) => unknown;
}
/** The `vscode` module with the parts of the lm API it may lack. */
export const lmApi = (): LmClasses => vscode as unknown as LmClasses;

/**
 * The `gpu-pilot mcp` definition VS Code starts: this extension's node (`ELECTRON_RUN_AS_NODE`) on
 * the language server's bundle, `dist/server.js mcp` (server/src/server.ts runs the CLI's `gpu-pilot
 * mcp` for it: the .vsix carries no dist/cli.js), without --allow-run, with the window's claims
 * settings (`--no-claims`, `--claims-dir`).
 */
export function mcpDefinitionArgs(extensionPath: string): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const claims = config.claims();
  const claimArgs = !claims.enabled
    ? ["--no-claims"]
    : claims.directory.trim()
      ? ["--claims-dir", claims.directory.trim()]
      : [];
  return {
    command: process.execPath,
    args: [
      path.join(extensionPath, "dist", "server.js"),
      "mcp",
      "--nvidia-smi",
      config.nvidiaSmiPath(),
      ...(root ? ["--root", root] : []),
      ...claimArgs,
    ],
    env: { ELECTRON_RUN_AS_NODE: "1" },
  };
}

/**
 * Registers the tools and the MCP server definition while `gpuPilot.agentTools.enabled` is true
 * (re-checked on every change of it). Where `vscode.lm.registerTool` or
 * `registerMcpServerDefinitionProvider` is missing (VS Code before 1.95 / 1.101) that part is
 * skipped with a log line.
 * @returns what to dispose, and `registered()`: the tool names registered now (tests, the e2e).
 */
export function registerAgentTools(
  tools: Record<ToolName, AgentTool>,
  extensionPath: string,
): { disposables: vscode.Disposable[]; registered(): string[] } {
  const live: vscode.Disposable[] = [];
  let names: string[] = [];
  const mcpChanged = new vscode.EventEmitter<void>();
  const enabled = () => vscode.workspace.getConfiguration(config.SECTION).get<unknown>("agentTools.enabled") !== false;
  const apply = () => {
    for (const d of live.splice(0)) d.dispose();
    names = [];
    if (!enabled()) {
      log.info("Agent tools are off (gpuPilot.agentTools.enabled).");
      return;
    }
    const lm = lmApi().lm;
    if (typeof lm?.registerTool !== "function") {
      log.info(
        "This VS Code has no language-model tool API (vscode.lm.registerTool, VS Code 1.95+): GPU Pilot's agent tools are not registered.",
      );
    } else {
      for (const [name, tool] of Object.entries(tools)) {
        try {
          live.push(lm.registerTool(name, tool));
          names.push(name);
        } catch (e) {
          log.warn(`Could not register the agent tool ${name}: ${(e as Error).message}`);
        }
      }
    }
    const Def = lmApi().McpStdioServerDefinition;
    if (typeof lm?.registerMcpServerDefinitionProvider === "function" && Def) {
      try {
        live.push(
          lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
            onDidChangeMcpServerDefinitions: mcpChanged.event,
            provideMcpServerDefinitions: () => {
              const d = mcpDefinitionArgs(extensionPath);
              return [new Def("GPU Pilot", d.command, d.args, d.env)];
            },
          }),
        );
      } catch (e) {
        log.warn(`Could not register the GPU Pilot MCP server: ${(e as Error).message}`);
      }
    }
  };
  apply();
  const sub = vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration(ENABLED_KEY)) apply();
    else if (config.affects(e, config.NVIDIA_SMI_KEYS)) mcpChanged.fire();
  });
  return {
    disposables: [
      sub,
      mcpChanged,
      {
        dispose: () => {
          for (const d of live.splice(0)) d.dispose();
        },
      },
    ],
    registered: () => [...names],
  };
}
