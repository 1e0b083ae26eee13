#!/usr/bin/env node
// `npm run package`: builds gpu-pilot.vsix, the installable VS Code extension.
//
//   npm run package                 # -> gpu-pilot.vsix in the repo root
//   npm run package -- --out F      # another file
//
// The extension is assembled in a fresh temporary folder rather than packaged from the repo root, so
// a concurrent `npm run build` / e2e run (which rebuild dist/) cannot mix an unminified bundle into
// it, and two packagings cannot collide: a minified production build (esbuild.mjs --minify
// --outdir=<folder>/dist), package.json without
// the vscode:prepublish step (done here), and the files .vscodeignore allows. Then
// `vsce package --no-dependencies` (esbuild bundled every dependency).
// The packed README is the user-facing one, docs/extension/README.md (the repository's README.md is
// for developers), its links rewritten here by packagedReadme(): images to their path inside the
// .vsix (or, with a `repository` URL in package.json, to that repository's raw file), `#anchors` and
// absolute URLs kept, other relative links only with a repository URL (else packaging fails: a
// relative link to a repository file is dead on the extension's details page). vsce then leaves
// links alone (--no-rewrite-relative-links; no repository field: --allow-missing-repository).
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { packagedReadme } from "./readmeLinks.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opts } = parseArgs({ options: { out: { type: "string", default: join(root, "gpu-pilot.vsix") } } });
const out = resolve(opts.out);
const stage = mkdtempSync(join(tmpdir(), "gpu-pilot-vsix-"));
process.on("exit", () => rmSync(stage, { recursive: true, force: true }));

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, stdio: "inherit" });
  if (r.status !== 0) {
    console.error(`package: ${[cmd, ...args].join(" ")} failed (${r.status ?? r.signal})`);
    process.exit(1);
  }
}

run(process.execPath, [join(root, "esbuild.mjs"), "--minify", `--outdir=${join(stage, "dist")}`], root);

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
delete pkg.scripts?.["vscode:prepublish"];
writeFileSync(join(stage, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
for (const f of ["CHANGELOG.md", "LICENSE", ".vscodeignore", "media", "syntaxes", "docs/rules"]) {
  const from = join(root, f);
  if (existsSync(from)) cpSync(from, join(stage, f), { recursive: true });
  else if (f !== "docs/rules") {
    console.error(`package: ${f} is missing`);
    process.exit(1);
  }
}

const USER_README = "docs/extension/README.md";
const repoUrl = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
const readme = packagedReadme(
  readFileSync(join(root, USER_README), "utf8"),
  USER_README,
  root,
  stage,
  repoUrl ? repoUrl.replace(/^git\+/, "").replace(/\.git$/, "") : undefined,
);
if (readme.problems.length) {
  console.error(
    `package: ${USER_README} has links that would be dead in the .vsix:\n  ${readme.problems.join("\n  ")}`,
  );
  process.exit(1);
}
writeFileSync(join(stage, "README.md"), readme.text);

const vsce = join(root, "node_modules", "@vscode", "vsce", "vsce");
rmSync(out, { force: true });
run(
  process.execPath,
  [vsce, "package", "--no-dependencies", "--allow-missing-repository", "--no-rewrite-relative-links", "--out", out],
  stage,
);
console.log(`package: ${out} (${(statSync(out).size / 1024).toFixed(0)} KiB)`);
