// What a user reads must not send them to a file only the repository holds: a path of this project
// named in a rule's message, related note or fix title (shown in the editor and printed by the
// `gpu-pilot` CLI of the npm package), or in a setting's or command's description (the .vsix), must
// be a file that the package carries. GPU002 once ended with "(docs/init-catalogue.md)", which
// neither package holds; rule docs reach the user as the packed docs/rules/GPUnnn.md pages instead.
//
// The packed lists come from the packagers themselves, without building: `vsce ls` reads
// .vscodeignore (scripts/package.mjs packs the same allowlist), `npm pack --dry-run` reads
// .npmignore. dist/ may be unbuilt here; no message names a file in it.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { ROOT } from "../support/root";

/**
 * The project's files that `text` names: tokens shaped like a path with an extension
 * (`docs/init-catalogue.md`, `BENCHMARKS.md`) that are files of this repository, as written or,
 * for a bare name, in docs/ (`ground-truth.md`). Paths of other projects (`accelerate/launchers.py`,
 * quoted from a library's source) are not files here and are left out.
 */
export function projectPathsIn(text: string): string[] {
  const out = new Set<string>();
  for (const [tok] of text.matchAll(/[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*\.[A-Za-z][A-Za-z0-9]*/g)) {
    const path = tok.replace(/^\.\//, "");
    for (const candidate of [path, ...(path.includes("/") ? [] : [`docs/${path}`])]) {
      const abs = join(ROOT, candidate);
      if (existsSync(abs) && statSync(abs).isFile()) out.add(candidate);
    }
  }
  return [...out];
}

/**
 * What the rules say to a user: the message, related notes, fix titles and notes of every finding
 * in the rule snapshots (test/fixtures/rules/GPUnnn/GPUnnn.snap, which every rule's test holds to
 * what the engine reports on its fixtures), without the fixed code's diffs or the files' headers.
 */
function ruleTexts(): Array<{ where: string; text: string }> {
  const dir = join(ROOT, "test", "fixtures", "rules");
  const out: Array<{ where: string; text: string }> = [];
  for (const code of readdirSync(dir)
    .filter((n) => /^GPU\d{3}$/.test(n))
    .sort()) {
    const snap = join(dir, code, `${code}.snap`);
    if (!existsSync(snap)) continue;
    readFileSync(snap, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (line.startsWith("#") || line.startsWith("    ")) return; // header, fix diff
        out.push({ where: `${code}.snap:${i + 1}`, text: line });
      });
  }
  return out;
}

/** The descriptions and titles package.json contributes (settings, commands, views, walkthrough). */
function manifestTexts(): Array<{ where: string; text: string }> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { contributes: unknown };
  const out: Array<{ where: string; text: string }> = [];
  const walk = (v: unknown, at: string): void => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        if (typeof x === "string" && /description|title|label|message/i.test(k))
          out.push({ where: `${at}.${k}`, text: x });
        else if (Array.isArray(x) && /description/i.test(k))
          x.forEach((s, i) => typeof s === "string" && out.push({ where: `${at}.${k}[${i}]`, text: s }));
        else walk(x, `${at}.${k}`);
      }
  };
  walk(pkg.contributes, "contributes");
  return out;
}

const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`,
  npm_config_update_notifier: "false",
};
let vsix: Set<string> | undefined;
let npm: Set<string> | undefined;
let npmMissing: string | undefined;
before(() => {
  const ls = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules", "@vscode", "vsce", "vsce"), "ls", "--no-dependencies"],
    { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 },
  );
  assert.equal(ls.status, 0, `vsce ls: ${ls.stderr}`);
  vsix = new Set(ls.stdout.split("\n").filter(Boolean));
  const pack = spawnSync("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], {
    cwd: ROOT,
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  if (pack.status !== 0 && pack.error) npmMissing = `npm cannot be run here (${pack.error.message})`;
  else {
    assert.equal(pack.status, 0, `npm pack --dry-run: ${pack.stderr}`);
    const [info] = JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>;
    npm = new Set(info.files.map((f) => f.path));
  }
});

test("the path finder picks this project's files and leaves other projects' paths alone", () => {
  assert.deepEqual(
    projectPathsIn(
      "not in the catalogue (docs/init-catalogue.md); BENCHMARKS.md; ground-truth.md; accelerate/launchers.py; docs/rules/GPU002.md.",
    ),
    ["docs/init-catalogue.md", "BENCHMARKS.md", "docs/ground-truth.md", "docs/rules/GPU002.md"],
  );
});

test("the packed lists are real: the .vsix holds the rule pages, the npm package its bin", () => {
  assert.ok(vsix?.has("docs/rules/GPU002.md") && vsix.has("package.json"), [...(vsix ?? [])].join(", "));
  assert.ok(!vsix?.has("docs/init-catalogue.md"), "docs/init-catalogue.md is in the .vsix after all");
  if (npm) assert.ok(npm.has("scripts/gpu-pilot.mjs"), [...npm].join(", "));
});

test("every project file a rule's message, related note or fix names is in the .vsix and in the npm package", (t) => {
  const texts = ruleTexts();
  assert.ok(texts.length > 500, `only ${texts.length} lines of rule output read`);
  const missing: string[] = [];
  for (const { where, text } of texts)
    for (const p of projectPathsIn(text)) {
      if (!vsix?.has(p)) missing.push(`${where}: ${p} (not in the .vsix)`);
      if (npm && !npm.has(p)) missing.push(`${where}: ${p} (not in the npm package)`);
    }
  assert.deepEqual(missing, []);
  if (npmMissing) t.diagnostic(`${npmMissing}: only the .vsix was checked`);
});

test("every project file a setting's, command's or walkthrough's description names is in the .vsix", () => {
  const texts = manifestTexts();
  assert.ok(texts.length > 100, `only ${texts.length} descriptions read`);
  const missing = texts.flatMap(({ where, text }) =>
    projectPathsIn(text)
      .filter((p) => !vsix?.has(p))
      .map((p) => `${where}: ${p}`),
  );
  assert.deepEqual(missing, []);
});
