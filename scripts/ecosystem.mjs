#!/usr/bin/env node
// `npm run ecosystem`: the ecosystem check, after Ruff's. Lints real ML code bases, pinned by commit in
// test/ecosystem/repos.json, with the CLI's default rules (and, reported apart, the preview rules),
// and compares every finding with the reviewed baseline test/ecosystem/baseline.json.
//
// The code bases are never copied into this repository: each is unpacked at its pinned commit into
// .cache/ecosystem/<owner>+<name>-<commit>/ (git-ignored), from a local git mirror when one has the
// commit (GPU_PILOT_ECOSYSTEM_MIRRORS, default /work/.mirror: <owner>+<name>/repo), else by
// `git clone` from GitHub.
//
// Usage: node scripts/ecosystem.mjs [--repo OWNER/NAME]... [--preview] [--write-new FILE] [--json FILE]
//   --repo       only these code bases
//   --preview    also lint with the preview rules on (findings of preview rules are listed apart)
//   --write-new  write the new findings (not in the baseline) as baseline entries with verdict
//                "unreviewed", for a human to review and merge into the baseline
//   --json       write the full result (findings, diff, precision) to FILE
// Exit code: 0 when the findings equal the baseline, 1 when any finding is new or gone, 2 on a
// setup failure (a code base that cannot be fetched, a CLI crash).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, dirname, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cache = join(root, ".cache", "ecosystem");
const mirrors = process.env.GPU_PILOT_ECOSYSTEM_MIRRORS ?? "/work/.mirror";
const { repos } = JSON.parse(readFileSync(join(root, "test", "ecosystem", "repos.json"), "utf8"));
const baselineFile = join(root, "test", "ecosystem", "baseline.json");
const baseline = existsSync(baselineFile) ? JSON.parse(readFileSync(baselineFile, "utf8")).findings : [];

const argv = process.argv.slice(2);
const only = [];
let preview = false,
  writeNew = null,
  jsonOut = null;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--repo") only.push(argv[++i]);
  else if (a === "--preview") preview = true;
  else if (a === "--write-new") writeNew = argv[++i];
  else if (a === "--json") jsonOut = argv[++i];
  else {
    console.error(`ecosystem: unknown argument ${JSON.stringify(a)}`);
    process.exit(2);
  }
}
const chosen = only.length ? repos.filter((r) => only.includes(r.repo)) : repos;
if (only.length && chosen.length !== only.length) {
  console.error(`ecosystem: not in repos.json: ${only.filter((o) => !repos.some((r) => r.repo === o)).join(", ")}`);
  process.exit(2);
}

/** File names the CLI lints or reads configuration from. */
const WANTED =
  /(\.(py|ipynb|toml|ya?ml|sh|bash|sbatch|slurm|md|markdown)$|^requirements.*\.txt$|^Dockerfile|\.dockerfile$|^environment\.ya?ml$)/i;

const git = (args, opts = {}) => spawnSync("git", args, { encoding: "utf8", maxBuffer: 1 << 30, ...opts });

/** Unpacks `repo` at `commit` into the cache (once); returns the folder. Throws with the reason. */
function checkout({ repo, commit }) {
  const slug = repo.replace("/", "+");
  const dir = join(cache, `${slug}-${commit.slice(0, 12)}`);
  // The marker records the file pattern it was unpacked with: a checkout made with another is redone.
  const marker = join(dir, ".gpu-pilot-ecosystem-complete");
  if (existsSync(marker) && readFileSync(marker, "utf8") === `${repo}@${commit}\n${WANTED.source}\n`) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  let gitDir = join(mirrors, slug, "repo");
  if (!existsSync(gitDir) || git(["--git-dir", gitDir, "cat-file", "-e", `${commit}^{commit}`]).status !== 0) {
    gitDir = join(cache, `${slug}.git`);
    if (!existsSync(gitDir)) {
      const c = git(["clone", "--bare", "--filter=blob:none", `https://github.com/${repo}.git`, gitDir], {
        stdio: ["ignore", "inherit", "inherit"],
      });
      if (c.status !== 0)
        throw new Error(
          `cannot clone https://github.com/${repo}.git (offline? set GPU_PILOT_ECOSYSTEM_MIRRORS to a folder of mirrors)`,
        );
    }
  }
  const tmp = `${dir}.partial`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  // Only the files the CLI reads (a mirror may lack the blobs of large media files, which git archive
  // would stop at): Python, notebooks, manifests and the configuration files the engine looks up.
  const ls = git(["--git-dir", gitDir, "ls-tree", "-r", "-z", commit]);
  if (ls.status !== 0) throw new Error(`git ls-tree ${repo}@${commit} failed: ${ls.stderr.trim()}`);
  const wanted = ls.stdout
    .split("\0")
    .filter(Boolean)
    .map((l) => {
      const [meta, path] = l.split("\t");
      const [mode, type, oid] = meta.split(" ");
      return { mode, type, oid, path };
    })
    .filter((e) => e.type === "blob" && e.mode !== "120000" && WANTED.test(e.path.split("/").pop()));
  const check = git(["--git-dir", gitDir, "cat-file", "--batch-check"], {
    input: wanted.map((e) => e.oid).join("\n") + "\n",
  });
  const present = new Set(
    check.stdout
      .split("\n")
      .filter((l) => / blob \d+$/.test(l))
      .map((l) => l.split(" ")[0]),
  );
  const have = wanted.filter((e) => present.has(e.oid));
  const batch = spawnSync("git", ["--git-dir", gitDir, "cat-file", "--batch"], {
    input: have.map((e) => e.oid).join("\n") + "\n",
    maxBuffer: 2 ** 32,
  });
  if (batch.status !== 0) throw new Error(`git cat-file ${repo} failed: ${batch.stderr}`);
  const buf = batch.stdout;
  let at = 0;
  for (const e of have) {
    const nl = buf.indexOf(10, at);
    const size = Number(buf.subarray(at, nl).toString("latin1").split(" ")[2]);
    const body = buf.subarray(nl + 1, nl + 1 + size);
    at = nl + 1 + size + 1;
    const out = join(tmp, ...e.path.split("/"));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, body);
  }
  if (have.length < wanted.length)
    console.error(
      `ecosystem: ${repo}: ${wanted.length - have.length} file(s) whose content the mirror lacks were left out`,
    );
  writeFileSync(join(tmp, ".gpu-pilot-ecosystem-complete"), `${repo}@${commit}\n${WANTED.source}\n`);
  renameSync(tmp, dir);
  return dir;
}

/** Runs the CLI over `dir`; returns its JSON findings with paths relative to `dir`. */
function lint(dir, extraArgs) {
  const r = spawnSync(
    process.execPath,
    [
      join(root, "scripts", "gpu-pilot.mjs"),
      "check",
      "--format",
      "json",
      "--exit-zero",
      "--no-cache",
      ...extraArgs,
      dir,
    ],
    { encoding: "utf8", maxBuffer: 1 << 30, cwd: dir },
  );
  if (r.status !== 0)
    throw new Error(`gpu-pilot check exited ${r.status} on ${dir}:\n${(r.stderr ?? "").slice(-2000)}`);
  return { findings: JSON.parse(r.stdout), stderr: r.stderr };
}

const keyOf = (f) => `${f.repo}\u0000${f.file}\u0000${f.cell ?? ""}\u0000${f.line}\u0000${f.code}`;
const fileCount = (dir) => {
  const r = git(["ls-files"], { cwd: dir });
  if (r.status === 0 && r.stdout) return r.stdout.split("\n").filter((p) => /\.(py|ipynb)$/.test(p)).length;
  const f = spawnSync("find", [dir, "-type", "f", "(", "-name", "*.py", "-o", "-name", "*.ipynb", ")"], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  return f.stdout.split("\n").filter(Boolean).length;
};

const current = [];
const previewOnly = [];
let files = 0;
const t0 = Date.now();
for (const r of chosen) {
  let dir;
  try {
    dir = checkout(r);
  } catch (e) {
    console.error(`ecosystem: ${e.message}`);
    process.exit(2);
  }
  files += fileCount(dir);
  const toEntry = (d) => ({
    repo: r.repo,
    commit: r.commit,
    file: relative(dir, d.filename).split(sep).join("/"),
    cell: d.cell,
    line: d.location.row,
    code: d.code,
    severity: d.severity,
    message: d.message,
  });
  let out;
  try {
    out = lint(dir, []);
  } catch (e) {
    console.error(`ecosystem: ${e.message}`);
    process.exit(2);
  }
  const mine = out.findings.map(toEntry);
  current.push(...mine);
  if (preview) {
    const seen = new Set(mine.map(keyOf));
    const p = lint(dir, ["--preview"])
      .findings.map(toEntry)
      .filter((f) => !seen.has(keyOf(f)));
    previewOnly.push(...p);
  }
  console.log(
    `${r.repo.padEnd(40)} ${String(mine.length).padStart(4)} finding(s)${preview ? `, ${previewOnly.filter((f) => f.repo === r.repo).length} more in preview` : ""}`,
  );
}

const inScope = baseline.filter((b) => chosen.some((r) => r.repo === b.repo && r.commit === b.commit));
const base = new Map(inScope.map((b) => [keyOf(b), b]));
const now = new Map(current.map((f) => [keyOf(f), f]));
const added = current.filter((f) => !base.has(keyOf(f)));
const gone = inScope.filter((b) => !now.has(keyOf(b)));
const changed = current.filter((f) => base.has(keyOf(f)) && base.get(keyOf(f)).severity !== f.severity);

const show = (f) =>
  `  ${f.repo} ${f.file}${f.cell != null ? ` cell ${f.cell}` : ""}:${f.line} ${f.code} [${f.severity}] ${(f.message ?? f.reason ?? "").replace(/\s+/g, " ").slice(0, 160)}`;
console.log(
  `\n${chosen.length} code bases, ${files} Python files and notebooks, ${current.length} findings (default rules), ${((Date.now() - t0) / 1000).toFixed(1)} s`,
);
if (added.length)
  console.log(`\nnew (${added.length}): not in the baseline; review each\n${added.map(show).join("\n")}`);
if (gone.length)
  console.log(
    `\ngone (${gone.length}): in the baseline, no longer reported\n${gone.map((b) => show({ ...b, message: `(was ${b.verdict}: ${b.reason})` })).join("\n")}`,
  );
if (changed.length)
  console.log(
    `\nseverity changed (${changed.length})\n${changed.map((f) => `${show(f)} (was ${base.get(keyOf(f)).severity})`).join("\n")}`,
  );
if (preview && previewOnly.length)
  console.log(`\npreview rules only (${previewOnly.length})\n${previewOnly.map(show).join("\n")}`);

// Precision per rule over the reviewed findings: true / (true + noise + unreviewed).
const perRule = new Map();
for (const f of current) {
  const b = base.get(keyOf(f));
  const v = b ? b.verdict : "unreviewed";
  const row = perRule.get(f.code) ?? { true: 0, noise: 0, unreviewed: 0 };
  row[v] = (row[v] ?? 0) + 1;
  perRule.set(f.code, row);
}
const rows = [...perRule.entries()].sort(([a], [b]) => a.localeCompare(b));
console.log(`\nper rule (default set): code  true  noise  unreviewed  precision`);
for (const [code, r] of rows) {
  const n = r.true + r.noise + r.unreviewed;
  console.log(
    `  ${code}  ${String(r.true).padStart(4)}  ${String(r.noise).padStart(5)}  ${String(r.unreviewed).padStart(10)}  ${n ? ((100 * r.true) / n).toFixed(0) + "%" : "-"}`,
  );
}
const noise = current.filter((f) => base.get(keyOf(f))?.verdict === "noise").length;
console.log(
  `noise: ${noise} in ${files} files (${files ? ((noise * 500) / files).toFixed(2) : 0} per 500 files; goal <= 1)`,
);

if (writeNew) {
  writeFileSync(
    writeNew,
    JSON.stringify(
      added.map((f) => ({
        repo: f.repo,
        commit: f.commit,
        file: f.file,
        cell: f.cell,
        line: f.line,
        code: f.code,
        severity: f.severity,
        verdict: "unreviewed",
        reason: "",
        message: f.message,
      })),
      null,
      2,
    ) + "\n",
  );
  console.log(`wrote ${added.length} new finding(s) to ${writeNew}`);
}
if (jsonOut)
  writeFileSync(
    jsonOut,
    JSON.stringify({ files, findings: current, previewOnly, added, gone, changed }, null, 2) + "\n",
  );
process.exit(added.length || gone.length || changed.length ? 1 : 0);
