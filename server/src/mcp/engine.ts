/**
 * The lint engine as the MCP server's gpu-pilot_checkFile uses it, handed to the server
 * (mcp/command.ts, mcp/server.ts) by the bundle that starts it: server/src/server.ts and
 * server/src/cli.ts import this module statically (the engine is in their start-up graph anyway),
 * while the MCP modules, loaded by `import()` for `mcp` only, import no engine module but its types.
 * So dist/mcp.js (the MCP server `node dist/server.js mcp` requires) carries no second copy of the
 * engine: server.js's is used. In dist/cli.js, where the MCP modules are deferred inside the bundle,
 * an engine module imported by them would make esbuild wrap the whole engine for lazy
 * initialisation (a module reached by `import()` has its dependencies wrapped too: a few ms more at
 * each start). esbuild.mjs (checkMcpBundle) fails the build when mcp.js carries engine code.
 */
import { initEngine } from "../engine/lint";
import type { MachineFacts } from "../engine/rule";
import { resolveLintOptions } from "../engine/options";
import { checkFileOnDisk } from "../agentCheck";
import type { CheckFileResult } from "../../../common/src/lsp/protocol";

/** Lints a file on disk (`path`, resolved) for `machine`, with its folder's `[tool.gpu-pilot]` options. */
export type McpCheckFile = (path: string, machine: MachineFacts) => Promise<CheckFileResult>;

/** {@link McpCheckFile} with the engine: loads the parser (once), then lints as `gpu-pilot check` would. */
export const mcpCheckFile: McpCheckFile = async (path, machine) => {
  await initEngine();
  return checkFileOnDisk(path, (file) => ({ ...resolveLintOptions(file, {}, "filesystemFirst", {}).options, machine }));
};
