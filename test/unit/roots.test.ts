// The roots (docs/architecture.md): common/ is imported by client/ and server/ and imports neither,
// nor `vscode`; server/ never imports `vscode`. eslint.config.mjs enforces both; this checks that the
// rules bite, and that no file under common/src breaks them today.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ESLint } from "eslint";
import { ROOT } from "./helpers";

const lintCommon = async (code: string) => {
  const [r] = await new ESLint({ cwd: ROOT }).lintText(code, { filePath: join(ROOT, "common/src/run/__probe.ts") });
  return r.messages.map((m) => `${m.ruleId}: ${m.message}`);
};

test("ESLint refuses an import of vscode, client/ or server/ in common/", async () => {
  assert.deepEqual(await lintCommon('import * as vscode from "vscode";\nvoid vscode;\n'),
    ["no-restricted-imports: 'vscode' import is restricted from being used. common/ runs outside VS Code too (CLI, MCP server): take what you need as a parameter."]);
  for (const spec of ["../../../client/src/log", "../../../server/src/engine/text"]) {
    const got = await lintCommon(`import * as m from "${spec}";\nvoid m;\n`);
    assert.equal(got.length, 1, spec);
    assert.match(got[0], /^no-restricted-imports: .*common\/ imports neither client\/ nor server\/: move what it needs into common\/\.$/);
  }
  assert.deepEqual(await lintCommon('import { basename } from "node:path";\nimport { isDeviceId } from "../gpu/selection";\nvoid basename; void isDeviceId;\n'), []);
});

test("ESLint refuses an import of vscode in server/ (language server, CLI, MCP server: plain Node)", async () => {
  const [r] = await new ESLint({ cwd: ROOT }).lintText('import * as vscode from "vscode";\nvoid vscode;\n', { filePath: join(ROOT, "server/src/engine/__probe.ts") });
  assert.deepEqual(r.messages.map((m) => `${m.ruleId}: ${m.message}`),
    ["no-restricted-imports: 'vscode' import is restricted from being used. server/ runs in plain Node (language server, CLI, MCP server): no vscode module there."]);
});

test("no file under common/src imports vscode, client/ or server/", () => {
  const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith(".ts") ? [join(d, n)] : []));
  const files = walk(join(ROOT, "common", "src"));
  assert.ok(files.some((f) => f.endsWith(join("run", "launch.ts"))), "common/src holds the launch model");
  const bad = files.filter((f) => /from "(vscode|[^"]*\/(client|server)\/[^"]*)"/.test(readFileSync(f, "utf8"))).map((f) => relative(ROOT, f));
  assert.deepEqual(bad, []);
});
