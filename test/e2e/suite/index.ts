// Mocha (tdd) runner loaded by the extension host through `extensionTestsPath` (code-server payload,
// see test/e2e/run.mjs) or by @vscode/test-electron (test/e2e/desktop.mjs). It runs every
// `*.test.js` file beside it (each compiled from test/e2e/suite/*.test.ts: add a file to add tests),
// prints `PASS: ` / `FAIL: ` lines, and writes suite-results.json into $GPU_PILOT_E2E_OUT.
import * as fs from "node:fs";
import * as path from "node:path";
import Mocha from "mocha";
import { SKIP_REASON } from "./skipReason";

interface TestRecord {
  title: string;
  state: "passed" | "failed" | "pending";
  durationMs?: number;
  error?: string;
  /** Why a pending test was skipped (skipReason.ts skipWithReason). */
  reason?: string;
}

/** The reason skipReason.ts `skipWithReason` left on the test's suite or one around it, if any. */
function skipReasonOf(t: Mocha.Runnable): string | undefined {
  for (let s: Mocha.Suite | undefined = t.parent; s; s = s.parent) {
    const r = (s as Mocha.Suite & { [SKIP_REASON]?: unknown })[SKIP_REASON];
    if (typeof r === "string") return r;
  }
  return undefined;
}

export function run(): Promise<void> {
  const outDir = process.env.GPU_PILOT_E2E_OUT;
  const grep = process.env.GPU_PILOT_E2E_GREP;
  const mocha = new Mocha({
    ui: "tdd",
    color: false,
    timeout: Number(process.env.GPU_PILOT_E2E_TEST_TIMEOUT_MS || 90_000),
    ...(grep ? { grep } : {}),
  });
  const files = fs
    .readdirSync(__dirname)
    .filter((f) => f.endsWith(".test.js"))
    .sort();
  for (const f of files) mocha.addFile(path.join(__dirname, f));
  const records: TestRecord[] = [];
  const write = (extra: Record<string, unknown> = {}) => {
    if (!outDir) return;
    fs.mkdirSync(outDir, { recursive: true });
    const passed = records.filter((r) => r.state === "passed").length;
    const failed = records.filter((r) => r.state === "failed").length;
    fs.writeFileSync(
      path.join(outDir, "suite-results.json"),
      JSON.stringify(
        { passed, failed, files, tests: records, pid: process.pid, node: process.version, ...extra },
        null,
        2,
      ),
    );
  };
  console.log(`[gpu-pilot e2e] running ${files.length} test file(s): ${files.join(", ")}`);
  return new Promise((resolve, reject) => {
    try {
      const runner = mocha.run((failures) => {
        write({ done: true });
        if (failures > 0) reject(new Error(`${failures} tests failed.`));
        else resolve();
      });
      runner.on("pass", (t) => {
        records.push({ title: t.fullTitle(), state: "passed", durationMs: t.duration });
        console.log(`PASS: ${t.fullTitle()} (${t.duration ?? 0} ms)`);
        write();
      });
      runner.on("fail", (t, err: Error) => {
        records.push({
          title: t.fullTitle(),
          state: "failed",
          durationMs: t.duration,
          error: String(err?.stack || err),
        });
        console.log(`FAIL: ${t.fullTitle()} :: ${String(err?.message || err)}`);
        write();
      });
      runner.on("pending", (t) => {
        const reason = skipReasonOf(t);
        records.push({ title: t.fullTitle(), state: "pending", ...(reason ? { reason } : {}) });
        console.log(`SKIP: ${t.fullTitle()}${reason ? ` (${reason})` : ""}`);
      });
    } catch (e) {
      write({ done: true, loadError: String((e as Error)?.stack || e) });
      reject(e);
    }
  });
}
