/**
 * `gpu-pilot mcp ARGS` as a command: the flags (parseMcpArgs), `--help`, a usage error, then the
 * MCP server on stdio (server.ts). One implementation for both bundles that start it: the CLI
 * (server/src/cli.ts, `node dist/cli.js mcp ...`, the npm package's `gpu-pilot mcp`) and the
 * language server's bundle (server/src/server.ts, `node dist/server.js mcp ...`, the server the
 * extension registers with VS Code, whose .vsix carries no cli.js). Both load this module by
 * `import()` for that command only: cli.js carries it, deferred (esbuild.mjs deferredImports); for
 * server.js it is the bundle dist/mcp.js (esbuild.mjs mcpOutOfServer), which server.js requires then.
 * The engine comes from the caller (mcp/engine.ts says why).
 */
import { escapeControls as plain } from "../../../common/src/text/controls";
import { exitQuietlyOnClosedPipe } from "../closedPipe";
import type { McpCheckFile } from "./engine";
import { MCP_USAGE, parseMcpArgs, startMcpServer } from "./server";

/** Where the command writes its help and usage errors. */
export interface McpCommandIo {
  out(s: string): void;
  err(s: string): void;
}

/**
 * Runs `gpu-pilot mcp` with the arguments after `mcp`.
 * @param version the server's version (the MCP initialize answer's serverInfo).
 * @param checkFile how gpu-pilot_checkFile lints (mcp/engine.ts's mcpCheckFile).
 * @returns 0 when stdin has closed (or after `--help`), 2 for a usage error (the message and the usage on stderr).
 */
export async function mcpMain(
  argv: readonly string[],
  io: McpCommandIo,
  version: string,
  checkFile: McpCheckFile,
): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.out(MCP_USAGE + "\n");
    return 0;
  }
  let options;
  try {
    options = parseMcpArgs(argv);
  } catch (e) {
    io.err(`gpu-pilot mcp: ${plain((e as Error).message)}\n${MCP_USAGE}\n`);
    return 2;
  }
  await startMcpServer(options, version, checkFile);
  return 0;
}

/**
 * Runs {@link mcpMain} as the process's command, as the CLI's runAsCommand runs `gpu-pilot mcp`:
 * a reader that closes stdout or stderr early ends the process quietly, and `process.exitCode` is
 * the command's exit code when it is done (0, or 2 for a usage error).
 * @param argv the arguments after `mcp`.
 */
export function runMcpAsCommand(argv: readonly string[], version: string, checkFile: McpCheckFile): void {
  exitQuietlyOnClosedPipe();
  const io: McpCommandIo = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };
  void mcpMain(argv, io, version, checkFile).then((code) => {
    process.exitCode = code;
  });
}
