// Bundles the client (extension host), the language server and the CLI into dist/, and copies the
// tree-sitter wasm files beside them (the server and the CLI load them from their own folder: no
// network). The client bundles no parser: what it needs from a parse it asks the language server
// (gpuPilot/runFacts, gpuPilot/checkFile); an import of the parser into the client fails the build.
// usage: node esbuild.mjs [--watch] [--minify] [--outdir=DIR]   (DIR defaults to dist; scripts/package.mjs
// builds the .vsix from its own folder so a concurrent `npm run build` cannot mix into it)
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
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
 * The client is two bundles (issue 20, load time): dist/client.js, what `activate()` runs, and
 * dist/lsp.js, the language client (vscode-languageclient, vscode-jsonrpc, the LSP protocol) that
 * client/src/ctx.ts requires a turn of the event loop after activation. In client.js the import of
 * ./lsp/languageClient becomes a require of "./lsp.js" beside it, and any import of the
 * language-client libraries fails the build (they would be bundled twice and read at activation).
 * @type {esbuild.Plugin}
 */
const lspOutOfEntry = {
  name: "lsp-out-of-entry",
  setup(build) {
    build.onResolve({ filter: /^\.\/lsp\/languageClient$/ }, () => ({ path: "./lsp.js", external: true }));
    build.onResolve({ filter: /^(vscode-languageclient|vscode-languageserver-protocol|vscode-jsonrpc)(\/|$)/ }, (args) => ({
      errors: [{ text: `dist/client.js must not bundle the language client: ${args.importer} imports ${args.path} (it belongs in dist/lsp.js, client/src/lsp/languageClient.ts)` }],
    }));
  },
};
/**
 * dist/lsp.js bundles only the language client: of the project's own files it may import only
 * these (no client module with state such as log.ts or config.ts: those would exist twice, once per
 * bundle; the caller passes what is needed).
 * @type {esbuild.Plugin}
 */
const lspBundleImports = {
  name: "lsp-bundle-imports",
  setup(build) {
    const allowed = ["../serverRestart", "../../../common/src/lsp/protocol", "./commandIds", "../../../common/src/lsp/nodeFlags"];
    build.onResolve({ filter: /^\./ }, (args) => {
      if (args.kind === "entry-point" || isDependency(args.importer) || allowed.includes(args.path)) return undefined;
      return { errors: [{ text: `dist/lsp.js may import only ${allowed.join(", ")}: ${args.importer} imports ${args.path}` }] };
    });
  },
};
/**
 * execa (with its dependencies ~115 KiB) is its own bundle too, dist/execa.js: client code loads it
 * only with `import("execa")` (common/src/gpu/nvidiaSmi.ts's loadExeca), which becomes a require of "./execa.js"
 * at the first process the client starts; a static import fails the build.
 * @type {esbuild.Plugin}
 */
const execaOutOfEntry = {
  name: "execa-out-of-entry",
  setup(build) {
    // A module of one line stands for execa: its require runs when the dynamic import does (a
    // require, not an import() of dist/execa.js: the extension host loads the client as CommonJS).
    build.onResolve({ filter: /^execa$/ }, (args) => args.kind === "dynamic-import"
      ? { path: "execa", namespace: "gp-execa-bundle" }
      : { errors: [{ text: `${args.importer} imports execa statically: use loadExeca() (common/src/gpu/nvidiaSmi.ts), execa is dist/execa.js, loaded on first use` }] });
    build.onLoad({ filter: /.*/, namespace: "gp-execa-bundle" }, () => ({ contents: 'module.exports = require("./execa.js");', loader: "js" }));
    build.onResolve({ filter: /^\.\/execa\.js$/ }, () => ({ path: "./execa.js", external: true }));
  },
};
/**
 * The client's entry is a third way smaller since dist/features.js (issue 20, load time):
 * dist/client.js is what `activate()` runs (client/src/shell.ts: registrations with stand-ins),
 * dist/features.js the code behind them (client/src/features.ts, ctx.ts and what they import), which
 * shell.ts requires at its first use. In client.js the import of ./features becomes a require of
 * "./features.js" beside it.
 * @type {esbuild.Plugin}
 */
const featuresOutOfEntry = {
  name: "features-out-of-entry",
  setup(build) {
    build.onResolve({ filter: /^\.\/features$/ }, (args) => (args.importer.endsWith(join("client", "src", "shell.ts"))
      ? { path: "./features.js", external: true }
      : { errors: [{ text: `only client/src/shell.ts loads the features (dist/features.js): ${args.importer} imports ${args.path}` }] }));
  },
};
/**
 * The modules dist/client.js holds and dist/features.js uses (client/src/shared.ts: its `import * as`
 * lines, paths from the repository root without the extension). A module in both bundles would
 * exist twice, with its state (the log channel, the selection store...): dist/features.js takes these
 * from dist/client.js's export `__gpuPilotShared` (a virtual module per file, reading the loaded
 * client.js from Node's module cache; it never loads a second copy), and the build fails when any
 * other file lands in two bundles (see {@link checkNoFileTwice}).
 */
const sharedFiles = [...readFileSync("client/src/shared.ts", "utf8").matchAll(/^import \* as \w+ from "([^"]+)";$/gm)]
  .map((m) => relative(".", resolve("client/src", m[1])).split("\\").join("/"));
{
  const text = readFileSync("client/src/shared.ts", "utf8");
  const missing = sharedFiles.filter((f) => !text.includes(`"${f}": `));
  if (missing.length > 0) throw new Error(`client/src/shared.ts imports but does not list ${missing.join(", ")}`);
}
/** @type {esbuild.Plugin} */
const sharedFromClient = {
  name: "shared-from-client",
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      if (isDependency(args.importer) || args.kind === "entry-point") return undefined;
      const file = relative(".", resolve(dirname(args.importer), args.path)).split("\\").join("/").replace(/\.ts$/, "");
      return sharedFiles.includes(file) ? { path: file, namespace: "gp-shared" } : undefined;
    });
    build.onLoad({ filter: /.*/, namespace: "gp-shared" }, (args) => ({
      loader: "js",
      contents: `const client = require.cache[require("path").join(__dirname, "client.js")];
const shared = client && client.exports.__gpuPilotShared;
if (!shared || !shared[${JSON.stringify(args.path)}]) throw new Error("dist/features.js takes ${args.path} from dist/client.js, the extension's main, which must be loaded first");
module.exports = shared[${JSON.stringify(args.path)}];`,
    }));
  },
};
/**
 * Fails the build when a file's code lands in two of the extension host's bundles (client.js,
 * features.js, lsp.js, execa.js): it would be two modules with two states. Files all of whose
 * code esbuild dropped (bytesInOutput 0, e.g. a type-only re-export) do not count.
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
    throw new Error(`a file is in two bundles (two copies of its module): ${twice.map(([f, b]) => `${f} in ${b.join(" and ")}`).join("; ")} (dist/features.js takes the modules of dist/client.js from client/src/shared.ts: add it there)`);
  }
}
/**
 * `gpu-pilot mcp` (the MCP SDK, zod, ajv, execa and the common/ modules it shares: about half of the
 * CLI's code) is its own bundle, dist/mcp.js: server/src/cli.ts loads it with
 * `import("./mcp/server")` only for that command, which becomes an import of "./mcp.js" beside it,
 * so `gpu-pilot check` (and each of its worker threads) does not compile it (issue 20, start-up).
 * @type {esbuild.Plugin}
 */
const mcpOutOfCli = {
  name: "mcp-out-of-cli",
  setup(build) {
    build.onResolve({ filter: /^\.\/mcp\/server$/ }, (args) => args.kind === "dynamic-import"
      ? { path: "./mcp.js", external: true }
      : { errors: [{ text: `${args.importer} imports ./mcp/server statically: the MCP server is dist/mcp.js, loaded by import() for \`gpu-pilot mcp\` only` }] });
  },
};
/**
 * `gpu-pilot kernel` (server/src/kernel/cli.ts, issue 42) is its own small bundle, dist/kernel.js:
 * server/src/cli.ts loads it with `import("./kernel/cli")` for that command only; it takes execa
 * from dist/execa.js (execaOutOfEntry), which the .vsix and the npm package both carry.
 * @type {esbuild.Plugin}
 */
const kernelOutOfCli = {
  name: "kernel-out-of-cli",
  setup(build) {
    build.onResolve({ filter: /^\.\/kernel\/cli$/ }, (args) => args.kind === "dynamic-import"
      ? { path: "./kernel.js", external: true }
      : { errors: [{ text: `${args.importer} imports ./kernel/cli statically: it is dist/kernel.js, loaded by import() for \`gpu-pilot kernel\` only` }] });
  },
};
/**
 * The modules dist/mcp.js takes from dist/cli.js (its MCP_SHARED export, server/src/cli.ts) instead of
 * bundling a second engine: paths from the repository root, without the extension.
 */
const MCP_SHARED = ["server/src/engine/lint", "server/src/engine/options", "common/src/fs/workspaceFile", "common/src/text/controls", "server/src/agentCheck", "common/src/nvidiaSmi/parse"];
/**
 * In dist/mcp.js an import of one of {@link MCP_SHARED} becomes `require("./cli.js").MCP_SHARED[...]`
 * (the one engine of the process: the .vsix carries it once); any other server module outside
 * server/src/mcp fails the build (it would be a second copy). Modules of common/ are bundled.
 * @type {esbuild.Plugin}
 */
const mcpSharesCli = {
  name: "mcp-shares-cli",
  setup(build) {
    build.onResolve({ filter: /^\./ }, (args) => {
      if (args.kind === "entry-point" || isDependency(args.importer)) return undefined;
      const rel = relative(root, resolve(args.resolveDir, args.path)).split(sep).join("/").replace(/\.ts$/, "");
      if (MCP_SHARED.includes(rel)) return { path: rel, namespace: "gp-cli-shared" };
      if (!rel.startsWith("server/src/") || rel.startsWith("server/src/mcp/")) return undefined;
      return { errors: [{ text: `dist/mcp.js may take from the server only ${MCP_SHARED.join(", ")} (from dist/cli.js): ${args.importer} imports ${args.path}` }] };
    });
    build.onLoad({ filter: /.*/, namespace: "gp-cli-shared" }, (args) => ({
      contents: `module.exports = require(require("node:path").join(__dirname, "cli.js")).MCP_SHARED[${JSON.stringify(args.path)}];`, loader: "js",
    }));
  },
};
const entries = [
  { entryPoints: ["client/src/extension.ts"], outfile: `${outdir}/client.js`, plugins: [noParserInClient, lspOutOfEntry, execaOutOfEntry, featuresOutOfEntry], metafile: true },
  { entryPoints: ["client/src/features.ts"], outfile: `${outdir}/features.js`, plugins: [noParserInClient, sharedFromClient, lspOutOfEntry, execaOutOfEntry], metafile: true },
  { entryPoints: ["client/src/execa.ts"], outfile: `${outdir}/execa.js`, metafile: true },
  { entryPoints: ["client/src/lsp/languageClient.ts"], outfile: `${outdir}/lsp.js`, plugins: [noParserInClient, lspBundleImports], metafile: true },
  { entryPoints: ["server/src/server.ts"], outfile: `${outdir}/server.js` },
  { entryPoints: ["server/src/cli.ts"], outfile: `${outdir}/cli.js`, plugins: [mcpOutOfCli, kernelOutOfCli] },
  { entryPoints: ["server/src/kernel/cli.ts"], outfile: `${outdir}/kernel.js`, plugins: [execaOutOfEntry] },
  { entryPoints: ["server/src/mcp/server.ts"], outfile: `${outdir}/mcp.js`, plugins: [mcpSharesCli] },
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
  checkNoFileTwice(Object.fromEntries(results.flatMap((r, i) => (r.metafile ? [[entries[i].outfile, r.metafile]] : []))));
}
