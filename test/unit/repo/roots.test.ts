// The roots (docs/architecture.md): common/ is imported by client/ and server/ and imports neither,
// nor `vscode`; server/ never imports `vscode`; client/ and server/ (two processes) never import each
// other. eslint.config.mjs enforces these; this checks that the rules bite, and that no file under
// common/src, client/src or server/src breaks them today (dynamic `import()` and `require()` too,
// which ESLint's no-restricted-imports does not see).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ESLint } from "eslint";
import { ROOT } from "../support/helpers";

const lintAt = async (file: string, code: string) => {
  const [r] = await new ESLint({ cwd: ROOT }).lintText(code, { filePath: join(ROOT, file) });
  return r.messages.map((m) => `${m.ruleId}: ${m.message}`);
};
const lintCommon = (code: string) => lintAt("common/src/run/__probe.ts", code);
/** The .ts files below `dir` (recursively). */
const walk = (d: string): string[] =>
  readdirSync(d).flatMap((n) =>
    statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : n.endsWith(".ts") ? [join(d, n)] : [],
  );
/** Every module specifier of `text`: import/export ... from, side-effect import, import(), require(). */
const specifiers = (text: string): string[] =>
  [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm)].map(
    (m) => m[1],
  );

test("ESLint refuses an import of vscode, client/ or server/ in common/", async () => {
  assert.deepEqual(await lintCommon('import * as vscode from "vscode";\nvoid vscode;\n'), [
    "no-restricted-imports: 'vscode' import is restricted from being used. common/ runs outside VS Code too (CLI, MCP server): take what you need as a parameter.",
  ]);
  for (const spec of ["../../../client/src/log", "../../../server/src/engine/lint"]) {
    const got = await lintCommon(`import * as m from "${spec}";\nvoid m;\n`);
    assert.equal(got.length, 1, spec);
    assert.match(
      got[0],
      /^no-restricted-imports: .*common\/ imports neither client\/ nor server\/: move what it needs into common\/\.$/,
    );
  }
  assert.deepEqual(
    await lintCommon(
      'import { basename } from "node:path";\nimport { isDeviceId } from "../gpu/selection";\nvoid basename; void isDeviceId;\n',
    ),
    [],
  );
});

test("ESLint refuses an import of vscode in server/ (language server, CLI, MCP server: plain Node)", async () => {
  const [r] = await new ESLint({ cwd: ROOT }).lintText('import * as vscode from "vscode";\nvoid vscode;\n', {
    filePath: join(ROOT, "server/src/engine/__probe.ts"),
  });
  assert.deepEqual(
    r.messages.map((m) => `${m.ruleId}: ${m.message}`),
    [
      "no-restricted-imports: 'vscode' import is restricted from being used. server/ runs in plain Node (language server, CLI, MCP server): no vscode module there.",
    ],
  );
});

test("no file under common/src imports vscode, client/ or server/", () => {
  const files = walk(join(ROOT, "common", "src"));
  assert.ok(
    files.some((f) => f.endsWith(join("run", "launch.ts"))),
    "common/src holds the launch model",
  );
  const bad = files
    .filter((f) => /from "(vscode|[^"]*\/(client|server)\/[^"]*)"/.test(readFileSync(f, "utf8")))
    .map((f) => relative(ROOT, f));
  assert.deepEqual(bad, []);
});

test("ESLint refuses an import of server/ in client/ and of client/ in server/ (two processes: what both need lives in common/)", async () => {
  const cases = [
    {
      file: "client/src/gpu/__probe.ts",
      spec: "../../../server/src/engine/lint",
      message: "client/ never imports server/ (another process): what both need lives in common/.",
    },
    {
      file: "client/src/__probe.ts",
      spec: "../../server/src/cli",
      message: "client/ never imports server/ (another process): what both need lives in common/.",
    },
    {
      file: "server/src/mcp/__probe.ts",
      spec: "../../../client/src/gpu/monitor",
      message: "server/ never imports client/ (another process): what both need lives in common/.",
    },
    {
      file: "server/src/__probe.ts",
      spec: "../../client/src/log",
      message: "server/ never imports client/ (another process): what both need lives in common/.",
    },
  ];
  for (const { file, spec, message } of cases) {
    for (const code of [
      `import * as m from "${spec}";\nvoid m;\n`,
      `import type { X } from "${spec}";\nexport type Y = X;\n`,
      `export * from "${spec}";\n`,
      `export { x } from "${spec}";\n`,
    ]) {
      assert.deepEqual(
        await lintAt(file, code),
        [`no-restricted-imports: '${spec}' import is restricted from being used by a pattern. ${message}`],
        `${file}: ${code}`,
      );
    }
  }
  // Both may import common/ (and the client vscode); the shell rules still hold there.
  assert.deepEqual(
    await lintAt(
      "client/src/gpu/__probe.ts",
      'import * as vscode from "vscode";\nimport { isDeviceId } from "../../../common/src/gpu/selection";\nvoid vscode; void isDeviceId;\n',
    ),
    [],
  );
  assert.deepEqual(
    await lintAt(
      "server/src/mcp/__probe.ts",
      'import { isDeviceId } from "../../../common/src/gpu/selection";\nvoid isDeviceId;\n',
    ),
    [],
  );
  for (const file of ["client/src/__probe.ts", "server/src/__probe.ts"]) {
    assert.deepEqual(
      await lintAt(file, 'import { execSync } from "node:child_process";\nvoid execSync;\n'),
      [
        "no-restricted-imports: 'execSync' import from 'node:child_process' is restricted. Runs a shell command string: use spawn/execFile (or execa) with an argument array.",
      ],
      file,
    );
  }
});

test("no file under client/src reaches into server/, none under server/src into client/ (static, dynamic and type imports)", () => {
  const crossing = (root: "client" | "server", other: "client" | "server") =>
    walk(join(ROOT, root, "src")).flatMap((f) =>
      specifiers(readFileSync(f, "utf8"))
        .filter((s) => s.startsWith(".") && relative(ROOT, join(dirname(f), s)).split(/[\\/]/)[0] === other)
        .map((s) => `${relative(ROOT, f)}: ${s}`),
    );
  assert.ok(
    specifiers(readFileSync(join(ROOT, "client/src/ctx.ts"), "utf8")).includes("../../common/src/gpu/selection"),
    "the scan reads the client's imports",
  );
  assert.deepEqual(crossing("client", "server"), []);
  assert.deepEqual(crossing("server", "client"), []);
});
