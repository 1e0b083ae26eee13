/**
 * The lint engine as the MCP server's gpu-pilot_checkFile uses it, handed to the server
 * (mcp/command.ts, mcp/server.ts) by the bundle that starts it: server/src/server.ts and
 * server/src/cli.ts import this module statically (the engine is in their start-up graph anyway),
 * while the MCP modules, loaded by `import()` for `mcp` only, import no engine module but its types.
 * An engine module imported by them would make esbuild wrap the whole engine for lazy
 * initialisation (a module reached by `import()` has its dependencies wrapped too): 8 KB more
 * bundle and about 3 ms more CPU at each language server start (2-3%, BENCHMARKS.md, ".vsix size");
 * esbuild.mjs fails the build on such an import.
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
