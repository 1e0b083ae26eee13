/**
 * The command-line faces' answer to a reader that goes away (`gpu-pilot check ... | head`, an MCP
 * client that exits mid-answer): shared by the CLI (cli.ts runAsCommand) and `mcp` in either bundle
 * (mcp/command.ts).
 */

/**
 * Ends the process quietly, with the exit code set so far (else 0), when a write to stdout or stderr
 * finds the pipe closed (EPIPE), as other command-line tools do, instead of an unhandled EPIPE with a
 * stack trace. Any other stream error is thrown.
 */
export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE") process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
}
