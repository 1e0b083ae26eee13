// Bundles the mocha suite (test/e2e/suite/index.ts + every *.test.ts) into <outDir>/ with esbuild:
// one CommonJS file per entry, `vscode` and `mocha` left external (the extension host supplies
// `vscode`; mocha resolves from the repo's node_modules because outDir lies inside the repo).
import * as esbuild from "esbuild";
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "./host.mjs";

export const suiteSrc = path.join(repoRoot, "test", "e2e", "suite");

export async function compileSuite(outDir) {
  const entries = fs
    .readdirSync(suiteSrc)
    .filter((f) => f === "index.ts" || f === "index.js" || /\.test\.(ts|js)$/.test(f))
    .map((f) => path.join(suiteSrc, f));
  if (!entries.some((e) => /index\.(ts|js)$/.test(e))) throw new Error(`no index.ts in ${suiteSrc}`);
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  await esbuild.build({
    entryPoints: entries,
    outdir: outDir,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    sourcemap: "inline",
    logLevel: "warning",
    external: ["vscode", "mocha"],
  });
  return path.join(outDir, "index.js");
}
