// Bundles the client (extension host), the language server and the CLI into dist/, and copies the
// tree-sitter wasm files beside them (the server and the CLI load them from their own folder: no
// network). The client bundles no parser: what it needs from a parse it asks the language server
// (gpuPilot/runFacts, gpuPilot/checkFile); an import of the parser into the client fails the build.
// usage: node esbuild.mjs [--watch] [--minify] [--outdir=DIR]   (DIR defaults to dist; scripts/package.mjs
// builds the .vsix from its own folder so a concurrent `npm run build` cannot mix into it)
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const root = dirname(fileURLToPath(import.meta.url));
/**
 * Whether esbuild's `importer` is a third-party module: a file under a node_modules folder *below this
 * repository* (its path relative to the repository root). The repository itself may sit in a
 * node_modules folder (an `npm install -g` of a clone, pre-commit's environment): an absolute-path test
 * would take every project file for a dependency and let the bundle checks pass them through.
 */
const isDependency = (importer) => /(^|[\\/])node_modules[\\/]/.test(relative(root, importer));
const watch = process.argv.includes("--watch");
const minify = process.argv.includes("--minify") || process.env.GPU_PILOT_MINIFY === "1";
const outdir = process.argv.find((a) => a.startsWith("--outdir="))?.slice("--outdir=".length) || "dist";

mkdirSync(outdir, { recursive: true });
copyFileSync(require.resolve("web-tree-sitter/tree-sitter.wasm"), `${outdir}/tree-sitter.wasm`);
copyFileSync(require.resolve("tree-sitter-python/tree-sitter-python.wasm"), `${outdir}/tree-sitter-python.wasm`);
// The GPU History webview's stylesheet: uPlot's CSS, then the panel's own (loaded from dist/, no CDN).
writeFileSync(`${outdir}/history.css`, readFileSync(require.resolve("uplot/dist/uPlot.min.css"), "utf8") + "\n" +
  readFileSync("client/webview/history.css", "utf8"));
// The GPU dashboard webview's stylesheet (its own only).
copyFileSync("client/webview/dashboard.css", `${outdir}/dashboard.css`);

/** @type {esbuild.BuildOptions} */
const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  sourcemap: true,
  minify,
  logLevel: "warning",
  external: ["vscode"],
  // jsonc-parser's UMD build (its "main") loads its parts with a require esbuild cannot follow: bundle its ESM build.
  alias: { "jsonc-parser": "./node_modules/jsonc-parser/lib/esm/main.js" },
  // web-tree-sitter's ESM build reads import.meta.url; give the CommonJS bundle a real one.
  define: { "import.meta.url": "__gpuPilotImportMetaUrl" },
  banner: { js: "const __gpuPilotImportMetaUrl = require('url').pathToFileURL(__filename).href;" },
};
/**
 * Fails the client's build when anything it imports reaches the tree-sitter parser (web-tree-sitter or
 * tree-sitter-python, e.g. through the engine's python/parser.ts): the client asks the language server instead.
 * @type {esbuild.Plugin}
 */
const noParserInClient = {
  name: "no-parser-in-client",
  setup(build) {
    build.onResolve({ filter: /^(web-tree-sitter|tree-sitter-python)(\/|$)/ }, (args) => ({
      errors: [{ text: `the client must not bundle the parser: ${args.importer} imports ${args.path} (ask the language server, see common/src/lsp/protocol.ts)` }],
    }));
  },
};
/**
 * One bundle per process (issue 44): dist/client.js (the extension host), dist/server.js (the
 * language server, and `gpu-pilot mcp` as `node dist/server.js mcp ...`: the MCP server the
 * extension registers, so that the .vsix carries no dist/cli.js), dist/cli.js (the CLI, `gpu-pilot
 * mcp` and `gpu-pilot kernel` included: the npm package's bundle), and the webviews' browser
 * bundles. Code that is needed later is deferred as work, not as another file: a module reached only
 * through `import()` (execa; the MCP server in the CLI; the kernel commands in the CLI) is bundled
 * with its code wrapped by esbuild and run at that import, not at the `require` of the bundle.
 * {@link deferredImports} fails the build when such a module is imported statically.
 *
 * An exception, kept because it measurably pays (BENCHMARKS.md, "One bundle per process"): the
 * language client (vscode-languageclient, vscode-jsonrpc, the LSP protocol: about 430 KiB minified,
 * more than the rest of the client together) is dist/lsp.js, which client/src/ctx.ts requires when it
 * starts the server, a turn after activation. In client.js the import of ./lsp/languageClient
 * becomes a require of "./lsp.js" beside it, and any import of the language-client libraries fails
 * the build (they would be bundled twice and read at activation).
 *
 * A second exception, for the same reason: the MCP server that `node dist/server.js mcp` runs (the
 * one the extension registers) is dist/mcp.js, which server.ts's `import("./mcp/command")` requires
 * at that command ({@link mcpOutOfServer}). Deferred inside server.js, its code (the MCP SDK with zod
 * and ajv: about 450 KiB minified) would still be read and pre-parsed at every language server
 * start: 12-15% more CPU to the first answer without a compile cache, 3-4% with one (BENCHMARKS.md,
 * ".vsix size"). mcp.js carries no engine (the engine is handed to it, server/src/mcp/engine.ts):
 * {@link checkMcpBundle}. dist/cli.js (the npm package) keeps the MCP server inside, deferred.
 * @type {esbuild.Plugin}
 */
const lspOutOfClient = {
  name: "lsp-out-of-client",
  setup(build) {
    build.onResolve({ filter: /^\.\/lsp\/languageClient$/ }, () => ({ path: "./lsp.js", external: true }));
    build.onResolve({ filter: /^(vscode-languageclient|vscode-languageserver-protocol|vscode-jsonrpc)(\/|$)/ }, (args) => ({
      errors: [{ text: `dist/client.js must not bundle the language client: ${args.importer} imports ${args.path} (it belongs in dist/lsp.js, client/src/lsp/languageClient.ts)` }],
    }));
  },
};
/**
 * dist/lsp.js bundles only the language client: of the project's own files it may import only
 * these, which hold no state (no client module such as log.ts or config.ts: it would exist twice,
 * once per bundle; the caller passes what is needed).
 * @type {esbuild.Plugin}
 */
const lspBundleImports = {
  name: "lsp-bundle-imports",
  setup(build) {
    // (./commandIds: protocol.ts's import of common/src/lsp/commandIds.ts)
    const allowed = ["../serverRestart", "../../../common/src/lsp/protocol", "./commandIds", "../../../common/src/lsp/nodeFlags"];
    build.onResolve({ filter: /^\./ }, (args) => {
      if (args.kind === "entry-point" || isDependency(args.importer) || allowed.includes(args.path)) return undefined;
      return { errors: [{ text: `dist/lsp.js may import only ${allowed.join(", ")}: ${args.importer} imports ${args.path}` }] };
    });
  },
};
/**
 * Fails the build when a module that must run only when first used is imported statically (its
 * code would run at the bundle's `require`): execa (common/src/gpu/nvidiaSmi.ts's loadExeca, at the
 * first process), in the language server and the CLI the MCP server (`mcp`: mcp/command.ts and
 * mcp/server.ts, with the MCP SDK), which the language server and `gpu-pilot check` never run, and in
 * the CLI the kernel commands (`gpu-pilot kernel`), which `gpu-pilot check` and its worker threads
 * never run.
 * @param {{ filter: RegExp, why: string }[]} lazy
 * @returns {esbuild.Plugin}
 */
const deferredImports = (lazy) => ({
  name: "deferred-imports",
  setup(build) {
    for (const { filter, why } of lazy) {
      build.onResolve({ filter }, (args) => (args.kind === "dynamic-import" || isDependency(args.importer)
        ? undefined
        : { errors: [{ text: `${args.importer} imports ${args.path} statically: ${why}; use import()` }] }));
    }
  },
});
/**
 * dist/main.js (the extension's main) holds only the code-cache loader (client/src/boot/codeCache.ts,
 * with common/src/fs/cacheDir.ts and the safe reader common/src/fs/workspaceFile.ts, which hold no
 * state, so their copies in client.js are no second state; main.js is left out of checkNoFileTwice):
 * the client's modules are in dist/client.js, which it loads.
 * @type {esbuild.Plugin}
 */
const BOOT_IMPORTS = ["client/src/boot/codeCache", "common/src/fs/cacheDir", "common/src/fs/workspaceFile"];
const bootOnly = {
  name: "boot-only",
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      const target = relative(root, resolve(args.resolveDir, args.path)).split(sep).join("/");
      return args.kind === "entry-point" || BOOT_IMPORTS.includes(target)
        ? undefined
        : { errors: [{ text: `dist/main.js may import only ${BOOT_IMPORTS.join(", ")}: ${args.importer} imports ${args.path} (the client's code belongs in dist/client.js)` }] };
    });
  },
};
const execaLazy = { filter: /^execa$/, why: "execa runs at the first process (common/src/gpu/nvidiaSmi.ts loadExeca)" };
const mcpLazy = { filter: /^\.\/mcp\/(command|server)$/, why: "the MCP server runs for `mcp` only (server/src/mcp/command.ts)" };
/**
 * In dist/server.js, server.ts's `import("./mcp/command")` becomes a require of "./mcp.js" beside it
 * (see {@link lspOutOfClient}); a static import fails first ({@link deferredImports} runs before).
 * @type {esbuild.Plugin}
 */
const mcpOutOfServer = {
  name: "mcp-out-of-server",
  setup(build) {
    build.onResolve({ filter: /^\.\/mcp\/command$/ }, () => ({ path: "./mcp.js", external: true }));
  },
};
/**
 * Fails the build when a file's code lands in both of the extension host's bundles (client.js and
 * lsp.js): it would be two modules with two states. Files all of whose code esbuild dropped
 * (bytesInOutput 0, e.g. a type-only re-export) do not count.
 * @param {Record<string, esbuild.Metafile>} metafiles bundle name -> its metafile
 */
function checkNoFileTwice(metafiles) {
  const where = new Map();
  for (const [bundle, meta] of Object.entries(metafiles)) {
    for (const output of Object.values(meta.outputs)) {
      for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
        if (bytesInOutput === 0) continue;
        where.set(file, [...(where.get(file) ?? []), bundle]);
      }
    }
  }
  const twice = [...where].filter(([, bundles]) => bundles.length > 1);
  if (twice.length > 0) {
    throw new Error(`a file is in two bundles (two copies of its module): ${twice.map(([f, b]) => `${f} in ${b.join(" and ")}`).join("; ")}`);
  }
}
/**
 * The stateless project files that dist/mcp.js and dist/server.js may both carry (each a copy of its
 * own in the `server.js mcp` process; no state, so no second state): text escaping, units, the safe
 * file reader, the nvidia-smi parsers. Dependencies (execa, which both reach) are not listed.
 */
const MCP_SHARED = ["common/src/text/controls.ts", "common/src/gpu/units.ts", "common/src/fs/workspaceFile.ts", "common/src/nvidiaSmi/parse.ts"];
/**
 * Fails the build when dist/mcp.js carries the lint engine (server/src/engine/, agentCheck.ts: it is
 * handed in from server.js, server/src/mcp/engine.ts), when dist/server.js carries the MCP server
 * (server/src/mcp/ but engine.ts, the MCP SDK: it belongs in mcp.js, read only for `mcp`), or when
 * both carry a project file outside {@link MCP_SHARED}. Files all of whose code esbuild dropped do not count.
 * @param {esbuild.Metafile} server dist/server.js's metafile
 * @param {esbuild.Metafile} mcp dist/mcp.js's metafile
 */
function checkMcpBundle(server, mcp) {
  const inputsOf = (meta) => new Set(Object.values(meta.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([f]) => f)));
  const [inServer, inMcp] = [inputsOf(server), inputsOf(mcp)];
  const problems = [
    ...[...inMcp].filter((f) => f.startsWith("server/src/engine/") || f === "server/src/agentCheck.ts").map((f) => `dist/mcp.js carries the engine's ${f} (hand it in: server/src/mcp/engine.ts)`),
    ...[...inServer].filter((f) => (f.startsWith("server/src/mcp/") && f !== "server/src/mcp/engine.ts") || /node_modules\/@modelcontextprotocol\//.test(f)).map((f) => `dist/server.js carries the MCP server's ${f} (it belongs in dist/mcp.js)`),
    ...[...inMcp].filter((f) => inServer.has(f) && !isDependency(f) && !MCP_SHARED.includes(f)).map((f) => `${f} is in both dist/server.js and dist/mcp.js (two copies of its module)`),
  ];
  if (problems.length > 0) throw new Error(problems.join("; "));
}
const entries = [
  // The extension's main: the code-cache loader of client.js (client/src/boot/main.ts), nothing else.
  { entryPoints: ["client/src/boot/main.ts"], outfile: `${outdir}/main.js`, plugins: [bootOnly] },
  { entryPoints: ["client/src/extension.ts"], outfile: `${outdir}/client.js`, plugins: [noParserInClient, lspOutOfClient, deferredImports([execaLazy])], metafile: true },
  { entryPoints: ["client/src/lsp/languageClient.ts"], outfile: `${outdir}/lsp.js`, plugins: [noParserInClient, lspBundleImports], metafile: true },
  { entryPoints: ["server/src/server.ts"], outfile: `${outdir}/server.js`, plugins: [deferredImports([execaLazy, mcpLazy]), mcpOutOfServer], metafile: true },
  // `node dist/server.js mcp`'s MCP server (server/src/mcp/command.ts), required by server.js for that command only.
  { entryPoints: ["server/src/mcp/command.ts"], outfile: `${outdir}/mcp.js`, plugins: [deferredImports([execaLazy])], metafile: true },
  { entryPoints: ["server/src/cli.ts"], outfile: `${outdir}/cli.js`, plugins: [deferredImports([
    execaLazy,
    mcpLazy,
    { filter: /^\.\/kernel\/cli$/, why: "the kernel commands run for `gpu-pilot kernel` only" },
  ])] },
  // The GPU History webview's script (uPlot bundled in): runs in the webview, not in Node.
  { entryPoints: ["client/webview/history.ts"], outfile: `${outdir}/history.js`, platform: "browser", target: "es2022", format: "iife",
    external: [], define: {}, banner: {} },
  // The GPU dashboard webview's script: runs in the webview, not in Node.
  { entryPoints: ["client/webview/dashboard.ts"], outfile: `${outdir}/dashboard.js`, platform: "browser", target: "es2022", format: "iife",
    external: [], define: {}, banner: {} },
].filter((e) => existsSync(e.entryPoints[0]));

if (watch) {
  for (const e of entries) (await esbuild.context({ ...common, ...e })).watch();
} else {
  const results = await Promise.all(entries.map((e) => esbuild.build({ ...common, ...e })));
  const metafiles = Object.fromEntries(results.flatMap((r, i) => (r.metafile ? [[entries[i].outfile, r.metafile]] : [])));
  // The extension host's two bundles (client.js, lsp.js) share no file; server.js and mcp.js split as checkMcpBundle says.
  const { [`${outdir}/server.js`]: server, [`${outdir}/mcp.js`]: mcp, ...host } = metafiles;
  checkNoFileTwice(host);
  if (server && mcp) checkMcpBundle(server, mcp);
}
