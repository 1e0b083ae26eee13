/** Runs `gpu-pilot` in this process (server/src/cli.ts `main`) with captured output, for the CLI tests. */
import { main } from "../../../server/src/cli";

/** What one in-process run gave: the exit code and everything written to stdout and stderr. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI with `argv` (e.g. `["check", "--format", "json", file]`) and `stdin` as standard input. */
export async function runCli(argv: string[], stdin = ""): Promise<CliRun> {
  let out = "";
  let err = "";
  const code = await main(argv, {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    stdin: () => Promise.resolve(stdin),
  });
  return { code, out, err };
}
