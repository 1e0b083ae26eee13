// Bundles the client (extension host), the language server and the CLI into dist/, and copies the
// tree-sitter wasm files beside them (the server loads them from its own folder: no network).
// usage: node esbuild.mjs [--watch] [--minify] [--outdir=DIR]   (DIR defaults to dist; scripts/package.mjs
// builds the .vsix from its own folder so a concurrent `npm run build` cannot mix into it)
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, existsSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const watch = process.argv.includes("--watch");
const minify = process.argv.includes("--minify") || process.env.GPU_PILOT_MINIFY === "1";
const outdir = process.argv.find((a) => a.startsWith("--outdir="))?.slice("--outdir=".length) || "dist";

mkdirSync(outdir, { recursive: true });
copyFileSync(require.resolve("web-tree-sitter/tree-sitter.wasm"), `${outdir}/tree-sitter.wasm`);
copyFileSync(require.resolve("tree-sitter-python/tree-sitter-python.wasm"), `${outdir}/tree-sitter-python.wasm`);

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
  // web-tree-sitter's ESM build reads import.meta.url; give the CommonJS bundle a real one.
  define: { "import.meta.url": "__gpuPilotImportMetaUrl" },
  banner: { js: "const __gpuPilotImportMetaUrl = require('url').pathToFileURL(__filename).href;" },
};
const entries = [
  { entryPoints: ["client/src/extension.ts"], outfile: `${outdir}/client.js` },
  { entryPoints: ["server/src/server.ts"], outfile: `${outdir}/server.js` },
  { entryPoints: ["server/src/cli.ts"], outfile: `${outdir}/cli.js` },
].filter((e) => existsSync(e.entryPoints[0]));

if (watch) {
  for (const e of entries) (await esbuild.context({ ...common, ...e })).watch();
} else {
  await Promise.all(entries.map((e) => esbuild.build({ ...common, ...e })));
}
