// Security (issue 9): never a shell string. ESLint's rules catch every way of running one (checked
// here through ESLint's API on bad snippets); the built bundles contain no shell use from our own
// code; executable paths from settings are machine-scoped; CUDA_VISIBLE_DEVICES values the extension
// builds hold only digits, commas and GPU-/MIG- UUIDs (fast-check).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ESLint } from "eslint";
import fc from "fast-check";
import { DEVICE_ID, InvalidDeviceIdError, validateDeviceIds } from "../../../common/src/gpu/selection";
import { LaunchError, visibleDevicesValue } from "../../../common/src/run/launch";
import { ROOT } from "../support/root";

/** Bad snippets, each with the rule that must report it. */
const BAD: Array<{ name: string; code: string; rule: string }> = [
  {
    name: "child_process.exec of a string",
    code: 'import * as cp from "node:child_process";\ncp.exec("ls " + process.argv[2]);\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "exec imported by name",
    code: 'import { exec } from "child_process";\nexec("ls");\n',
    rule: "no-restricted-imports",
  },
  {
    name: "execSync",
    code: 'import { execSync } from "node:child_process";\nexecSync("ls");\n',
    rule: "no-restricted-imports",
  },
  {
    name: "child_process.execSync on the module object",
    code: 'import child_process from "child_process";\nchild_process.execSync("ls");\n',
    rule: "no-restricted-properties",
  },
  {
    name: "require('child_process')",
    code: 'const cp = require("child_process");\ncp.execSync("ls");\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "exec destructured",
    code: 'const { execSync } = await import("node:child_process");\nexecSync("ls");\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "spawn with shell: true",
    code: 'import { spawn } from "node:child_process";\nspawn("ls", [], { shell: true });\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "spawn with a shell path",
    code: 'import { spawn } from "node:child_process";\nspawn("ls", [], { shell: "/bin/sh" });\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "minified shell: !0",
    code: 'import { spawnSync } from "node:child_process";\nspawnSync("ls", [], { "shell": !0 });\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "execa with shell: true",
    code: 'import { execa } from "execa";\nvoid execa("ls", [], { shell: true });\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "execaCommand",
    code: 'import { execaCommand } from "execa";\nvoid execaCommand("ls -l");\n',
    rule: "no-restricted-imports",
  },
  {
    name: "execaCommand on the module",
    code: 'const m = await import("execa");\nvoid m.execaCommand("ls -l");\n',
    rule: "no-restricted-properties",
  },
  {
    name: "execa's $ template",
    code: 'import { $ } from "execa";\nconst f = "x";\nvoid $`ls ${f}`;\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "$ template destructured",
    code: 'const { $ } = await import("execa");\nvoid $`ls`;\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "execa template form",
    code: 'import { execa } from "execa";\nvoid execa`ls -l`;\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "terminal.sendText",
    code: 'declare const terminal: { sendText(s: string): void };\nterminal.sendText("python " + "x.py");\n',
    rule: "no-restricted-properties",
  },
  {
    name: "terminal?.sendText",
    code: 'declare const t: { sendText(s: string): void } | undefined;\nt?.sendText("x");\n',
    rule: "no-restricted-properties",
  },
  {
    name: "new ShellExecution",
    code: 'declare const vscode: { ShellExecution: new (s: string) => unknown };\nnew vscode.ShellExecution("python x.py");\n',
    rule: "no-restricted-syntax",
  },
  {
    name: "new ProcessExecution (VS Code resolves ${...} in it)",
    code: 'declare const vscode: { ProcessExecution: new (p: string, a: string[]) => unknown };\nnew vscode.ProcessExecution("python3", ["${command:x}.py"]);\n',
    rule: "no-restricted-syntax",
  },
];

test("ESLint (eslint.config.mjs) reports every way of running a shell string", async () => {
  const eslint = new ESLint({ cwd: ROOT });
  for (const file of [
    "client/src/__probe.ts",
    "server/src/__probe.ts",
    "common/src/__probe.ts",
    "scripts/__probe.mjs",
  ]) {
    for (const bad of BAD) {
      if (file.endsWith(".mjs") && /declare |: \{/.test(bad.code)) continue; // TypeScript-only snippets
      const [r] = await eslint.lintText(bad.code, { filePath: join(ROOT, file) });
      const rules = r.messages.filter((m) => m.severity === 2).map((m) => m.ruleId);
      assert.ok(
        rules.includes(bad.rule),
        `${file}: "${bad.name}" is not reported by ${bad.rule} (got ${JSON.stringify(r.messages.map((m) => `${m.ruleId}: ${m.message}`))})`,
      );
    }
  }
  const [ok] = await eslint.lintText(
    'import { spawn } from "node:child_process";\nimport { execa } from "execa";\nspawn("ls", ["-l"], { shell: false });\nvoid execa("ls", ["-l"]);\nconst m = /a/.exec("a");\nvoid m;\n',
    { filePath: join(ROOT, "client/src/__probe.ts") },
  );
  assert.deepEqual(
    ok.messages.map((m) => `${m.ruleId}: ${m.message}`),
    [],
    "argument arrays (and RegExp.exec) are fine",
  );
});

/**
 * Occurrences that come from bundled libraries, allowed with the reason they are unreachable:
 * module + pattern → why.
 */
const LIBRARY_ALLOWED: Record<string, string> = {
  // execa's index defines and exports execaCommand/execaCommandSync next to execa; nvidiaSmi.ts
  // imports the module dynamically (ESM-only) and calls only `execa(file, args)`, so esbuild cannot
  // drop the others, but nothing calls them (ESLint forbids naming them in our code).
  "node_modules/execa/index.js execaCommand": "defined, never called",
};

test("the built bundles use no shell, sendText, execSync or execaCommand from our own code", () => {
  const out = mkdtempSync(join(tmpdir(), "gpu-pilot-bundle-"));
  try {
    const build = spawnSync(process.execPath, ["esbuild.mjs", `--outdir=${out}`], { cwd: ROOT, encoding: "utf8" });
    assert.equal(build.status, 0, build.stderr);
    const patterns: Array<[string, RegExp]> = [
      ["shell", /\bshell\s*:\s*(?:true|!0|["'`])/g],
      ["sendText", /\.sendText\s*\(/g],
      ["execSync", /\bexecSync\b/g],
      ["exec", /child_process\d*\.exec\b/g],
      ["execaCommand", /\bexecaCommand(?:Sync)?\b/g],
      ["ShellExecution", /\bShellExecution\s*\(/g],
    ];
    const bundles = readdirSync(out).filter((f) => f.endsWith(".js"));
    assert.deepEqual(
      bundles.sort(),
      ["cli.js", "client.js", "dashboard.js", "history.js", "lsp.js", "main.js", "mcp.js", "server.js"],
      "one bundle per process (and the language client's, the client's loader, the language server's MCP server, and the two webviews')",
    );
    const found: string[] = [];
    for (const f of bundles) {
      const text = readFileSync(join(out, f), "utf8");
      for (const [name, re] of patterns) {
        for (const m of text.matchAll(re)) {
          // esbuild (not minified) starts each module's code with a `// path` comment line.
          const h = text.lastIndexOf("\n// ", m.index);
          const path = h < 0 ? "?" : text.slice(h + 4, text.indexOf("\n", h + 1)).trim();
          // A dependency's path from its node_modules folder (esbuild writes it relative to the
          // repository: "../../x/node_modules/..." when node_modules is a link to another folder).
          const dep = path.lastIndexOf("node_modules/");
          const module = dep < 0 ? path : path.slice(dep);
          if (!module.startsWith("node_modules/")) {
            found.push(`${f}: ${name} in our code (${module}): ${m[0]}`);
            continue;
          }
          if (!LIBRARY_ALLOWED[`${module} ${name}`])
            found.push(`${f}: ${name} in ${module}, not in the allowed list: ${m[0]}`);
        }
      }
    }
    assert.deepEqual(found, []);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test("settings naming a program (…Path, …Executable, …Program) are machine-scoped: a workspace cannot choose what runs", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    contributes: {
      configuration:
        { properties: Record<string, { scope?: string }> } | Array<{ properties: Record<string, { scope?: string }> }>;
    };
  };
  const conf = pkg.contributes.configuration;
  const props = Array.isArray(conf)
    ? (Object.assign({}, ...conf.map((c) => c.properties)) as Record<string, { scope?: string }>)
    : conf.properties;
  const programs = Object.keys(props).filter((k) => /(Path|Executable|Program)$/.test(k));
  assert.ok(programs.includes("gpuPilot.nvidiaSmiPath"));
  for (const k of programs)
    assert.ok(["machine", "machine-overridable"].includes(props[k].scope ?? ""), `${k} has scope ${props[k].scope}`);
});

const HEX = "0123456789abcdefABCDEF";
const hex = (n: number) => fc.string({ unit: fc.constantFrom(...HEX), minLength: n, maxLength: n });
const uuid = fc.tuple(hex(8), hex(4), hex(4), hex(4), hex(12)).map((p) => p.join("-"));
const validId = fc.oneof(
  fc.integer({ min: 0, max: 9999 }).map(String),
  uuid.map((u) => `GPU-${u}`),
  uuid.map((u) => `MIG-${u}`),
  fc.tuple(uuid, fc.nat({ max: 20 }), fc.nat({ max: 20 })).map(([u, g, c]) => `MIG-GPU-${u}/${g}/${c}`),
);
const nasty = fc.constantFrom(
  "0;rm -rf ~",
  "0 1",
  "$(id)",
  "`id`",
  "0,1",
  "0\n1",
  "'0'",
  '"0"',
  "0|1",
  "0&",
  "GPU-../../x",
  "٣",
  "０",
  "-1",
  "1e3",
  "0x1",
  "",
  " ",
  "\u0000",
  "GPU-",
  "MIG-GPU-x/1/2",
);
const entry = fc.oneof(
  { weight: 3, arbitrary: validId },
  { weight: 1, arbitrary: nasty },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
);
const SAFE_VALUE = /^[0-9A-Za-z/-]+(?:,[0-9A-Za-z/-]+)*$/;

test("CUDA_VISIBLE_DEVICES built by the extension holds only digits, commas and GPU-/MIG- UUIDs (fast-check, 2,000 cases)", () => {
  fc.assert(
    fc.property(fc.array(entry, { maxLength: 6 }), (ids) => {
      let accepted: string[] | null = null;
      try {
        accepted = validateDeviceIds(ids);
      } catch (e) {
        assert.ok(e instanceof InvalidDeviceIdError);
      }
      if (accepted) for (const id of accepted) assert.match(id, DEVICE_ID);
      let value: string | null = null;
      try {
        value = visibleDevicesValue(ids);
      } catch (e) {
        assert.ok(e instanceof LaunchError, String(e));
      }
      if (value !== null) {
        assert.match(value, SAFE_VALUE);
        for (const id of value.split(",")) assert.match(id, DEVICE_ID);
        assert.ok(/^\d+(,\d+)*$/.test(value) || /^(GPU|MIG)-/.test(value), `indices and UUIDs mixed: ${value}`);
      }
    }),
    { numRuns: 2000, seed: 9 },
  );
  // Valid entries of one kind are always accepted, in order, without duplicates.
  fc.assert(
    fc.property(
      fc.uniqueArray(
        validId.filter((id) => !/^\d/.test(id)),
        { minLength: 1, maxLength: 4 },
      ),
      (ids) => {
        assert.equal(visibleDevicesValue(ids), ids.join(","));
      },
    ),
    { numRuns: 500, seed: 9 },
  );
});
