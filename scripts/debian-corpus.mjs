#!/usr/bin/env node
// The Debian real-code corpus (issue 16): the Python source shipped in Debian's python3-torch,
// python3-torchvision, python3-torchaudio, python3-skorch, python3-numba and python3-dask binary
// packages, fetched with `apt-get download PACKAGE=VERSION` and unpacked with `dpkg -x` into
// .cache/debian/<package>_<version>/ (git-ignored, never committed). The pinned versions and the
// reviewed findings are in test/corpus/debian-expected.json; findings that are wrong (the program
// does not misbehave as the message says) are in test/corpus/debian-known-false.json until the rules
// are fixed. Used by `npm test` (test/unit/repo/debianCorpus.test.ts), the benchmarks (bench/corpus.mjs)
// and the fix-safety property check (scripts/fix-property.mjs --debian).
//
// usage: node scripts/debian-corpus.mjs check     compare the CLI's findings with the committed files
//        node scripts/debian-corpus.mjs fetch     download and unpack the pinned packages; print the trees
//        node scripts/debian-corpus.mjs update    rewrite both files from the CLI's findings: gone ones are
//                                                 dropped, new ones are added with verdict "unreviewed"
//                                                 (which `check` fails on until a person gives a verdict
//                                                 and a reason), versions follow the archive
// exit codes: 0 passed, 1 failed, 3 skipped (no apt-get or dpkg, or the archive cannot be reached)
import { execa } from "execa";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const EXPECTED_FILE = join(ROOT, "test", "corpus", "debian-expected.json");
export const KNOWN_FALSE_FILE = join(ROOT, "test", "corpus", "debian-known-false.json");
/** Where the .deb files and unpacked trees go; GPU_PILOT_DEBIAN_CACHE overrides (a CI cache folder). */
export const CACHE_DIR = process.env.GPU_PILOT_DEBIAN_CACHE || join(ROOT, ".cache", "debian");
/** Exit code of the `check` command when the corpus cannot be fetched (skipped, not passed). */
export const EXIT_SKIPPED = 3;
const VERDICTS = new Set(["true", "noise"]);

/** Thrown when the corpus cannot be fetched for a reason outside this repository (no apt, offline). */
export class CorpusUnavailable extends Error {}

/** Reads a committed corpus file ({ suite, packages: {name: version}, findings: [...] }). @throws on bad JSON. */
export function readCorpusFile(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

const have = async (cmd) => (await execa(cmd, ["--version"], { reject: false })).exitCode === 0;

/**
 * `apt-get download --print-uris SPEC` (SPEC: "pkg" or "pkg=version"): the version apt would fetch,
 * from the .deb file name apt prints (epoch colons are %3a there), or null when apt has no such
 * package or version in its lists.
 */
async function aptVersion(spec) {
  const r = await execa("apt-get", ["download", "--print-uris", spec], { reject: false });
  if (r.exitCode !== 0) return null;
  const m = /^'[^']*' (\S+?)_(\S+?)_(\S+?)\.deb /m.exec(r.stdout);
  return m ? decodeURIComponent(m[2]) : null;
}

/**
 * Makes sure `pkg` is unpacked under .cache/debian/, preferring `version` (the pinned one).
 * Returns { tree, version, drift }: drift is the archive's version when the pinned one is no longer
 * available (the tree is then that version's), else null.
 * @throws CorpusUnavailable when apt-get/dpkg are missing, apt knows no version of the package (its
 *         lists are empty: run `apt-get update`), or the download fails (offline).
 * @throws Error when dpkg -x fails on a downloaded package.
 */
export async function ensurePackage(pkg, version) {
  const pinnedTree = join(CACHE_DIR, `${pkg}_${version}`);
  if (existsSync(join(pinnedTree, ".unpacked"))) return { tree: pinnedTree, version, drift: null };
  if (!(await have("apt-get")) || !(await have("dpkg")))
    throw new CorpusUnavailable("apt-get or dpkg is not installed (not a Debian-based machine)");
  let got = await aptVersion(`${pkg}=${version}`);
  let drift = null;
  if (got === null) {
    got = await aptVersion(pkg);
    if (got === null)
      throw new CorpusUnavailable(
        `apt has no record of ${pkg} (its package lists are empty or lack the suite: run \`apt-get update\` first)`,
      );
    drift = got;
  }
  const tree = join(CACHE_DIR, `${pkg}_${got}`);
  if (existsSync(join(tree, ".unpacked"))) return { tree, version: got, drift };
  const debs = join(CACHE_DIR, "debs");
  mkdirSync(debs, { recursive: true });
  const isDeb = (f) => {
    const m = /^(.+?)_(.+?)_[^_]+\.deb$/.exec(f);
    return m !== null && m[1] === pkg && decodeURIComponent(m[2]) === got;
  };
  let deb = readdirSync(debs).find(isDeb);
  if (!deb) {
    const r = await execa("apt-get", ["download", `${pkg}=${got}`], { cwd: debs, reject: false });
    deb = readdirSync(debs).find(isDeb);
    if (!deb)
      throw new CorpusUnavailable(
        `apt-get download ${pkg}=${got} failed (offline?): ${(r.stderr || r.stdout || String(r.exitCode)).trim().split("\n").pop()}`,
      );
  }
  const partial = `${tree}.partial`;
  rmSync(partial, { recursive: true, force: true });
  const x = await execa("dpkg", ["-x", join(debs, deb), partial], { reject: false });
  if (x.exitCode !== 0) throw new Error(`dpkg -x ${deb} failed: ${x.stderr}`);
  writeFileSync(join(partial, ".unpacked"), `${deb}\n`);
  rmSync(tree, { recursive: true, force: true });
  renameSync(partial, tree);
  return { tree, version: got, drift };
}

/** Every pinned package of test/corpus/debian-expected.json, fetched: [{ pkg, pinned, tree, version, drift }]. */
export async function ensureCorpus() {
  const { packages } = readCorpusFile(EXPECTED_FILE);
  const out = [];
  for (const [pkg, pinned] of Object.entries(packages))
    out.push({ pkg, pinned, ...(await ensurePackage(pkg, pinned)) });
  return out;
}

/**
 * Runs the CLI once (`scripts/gpu-pilot.mjs check --format json --statistics`) over unpacked trees.
 * Returns { byTree: Map<tree, [{ file, line, column, code, severity, message }]>, files } with `file`
 * relative to its tree (the package's root, as dpkg -x lays it out) and `files` the number of files
 * the CLI checked in all.
 * @throws Error when the CLI exits 2 (bad usage or unreadable input).
 */
export async function lintTrees(trees) {
  const r = await execa(
    process.execPath,
    [
      join(ROOT, "scripts", "gpu-pilot.mjs"),
      "check",
      "--format",
      "json",
      "--statistics",
      "--exit-zero",
      "--no-cache",
      ...trees,
    ],
    { reject: false, maxBuffer: 256 << 20 },
  );
  if (r.exitCode !== 0) throw new Error(`gpu-pilot check exited ${r.exitCode}: ${r.stderr}`);
  const files = Number(/parsed \d+ of (\d+) files/.exec(r.stderr)?.[1] ?? NaN);
  const byTree = new Map(trees.map((t) => [t, []]));
  for (const d of JSON.parse(r.stdout)) {
    const tree = trees.find((t) => !relative(t, d.filename).startsWith(".."));
    if (tree === undefined)
      throw new Error(`gpu-pilot reported ${d.filename}, which is in none of ${trees.join(", ")}`);
    byTree.get(tree).push({
      file: relative(tree, d.filename).split(sep).join("/"),
      line: d.location.row,
      column: d.location.column,
      code: d.code,
      severity: d.severity,
      message: d.message,
    });
  }
  return { byTree, files };
}

/** Every .py file under `dir`, sorted (absolute paths). */
export function pythonFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && e.name.endsWith(".py")) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

const keyOf = (f) => `${f.package}\t${f.file}\t${f.line}\t${f.column}\t${f.code}`;
const where = (f) => `${f.package} ${f.file}:${f.line}:${f.column} ${f.code}`;

/**
 * Compares the CLI's findings with the committed files. `runs`: [{ pkg, pinned, version, drift,
 * findings, pythonFiles }]. Returns { failures: string[], notes: string[], knownFalse: number }: a new,
 * gone or changed (severity) finding, an entry without a verdict of true or noise and a reason, a
 * known-false finding that is no longer reported, an entry whose version is not its package's pinned
 * one, and a version drift are failures.
 */
export function compare(expected, knownFalse, runs) {
  const failures = [],
    notes = [];
  for (const [name, doc] of [
    ["debian-expected.json", expected],
    ["debian-known-false.json", knownFalse],
  ]) {
    for (const e of doc.findings) {
      if (expected.packages[e.package] === undefined)
        failures.push(`${name}: ${where(e)}: package ${e.package} is not pinned in debian-expected.json`);
      else if (e.version !== expected.packages[e.package])
        failures.push(`${name}: ${where(e)}: version ${e.version} is not the pinned ${expected.packages[e.package]}`);
      if (!e.reason || !e.reason.trim()) failures.push(`${name}: ${where(e)}: no reason given`);
      if (name === "debian-expected.json" && !VERDICTS.has(e.verdict))
        failures.push(
          `${name}: ${where(e)}: verdict "${e.verdict}" (give true or noise after reading the code; a wrong finding goes to debian-known-false.json)`,
        );
      if (name === "debian-known-false.json" && e.verdict !== "false")
        failures.push(`${name}: ${where(e)}: verdict "${e.verdict}" (this list holds wrong findings only)`);
    }
  }
  const exp = new Map(expected.findings.map((e) => [keyOf(e), e]));
  const kf = new Map(knownFalse.findings.map((e) => [keyOf(e), e]));
  let knownFalseCount = 0;
  for (const run of runs) {
    if (run.drift)
      failures.push(
        `${run.pkg}: the Debian archive now has version ${run.drift}, not the pinned ${run.pinned} (suite: ${expected.suite}): this report compares ${run.drift}; review its diff, then run \`node scripts/debian-corpus.mjs update\` and give every new finding a verdict`,
      );
    const seen = new Set();
    let matched = 0,
      kfHere = 0;
    const newOnes = [],
      changed = [];
    for (const f of run.findings) {
      const a = { ...f, package: run.pkg };
      const k = keyOf(a);
      seen.add(k);
      const e = exp.get(k) ?? kf.get(k);
      if (!e) {
        newOnes.push(`  new      ${where(a)} ${a.severity}: ${a.message}`);
        continue;
      }
      if (e.severity !== a.severity) changed.push(`  changed  ${where(a)}: severity ${e.severity} -> ${a.severity}`);
      if (kf.has(k)) kfHere++;
      else matched++;
    }
    const gone = [...exp.values(), ...kf.values()]
      .filter((e) => e.package === run.pkg && !seen.has(keyOf(e)))
      .map((e) =>
        kf.has(keyOf(e))
          ? `  fixed    ${where(e)} (known false, no longer reported: remove it from debian-known-false.json)`
          : `  gone     ${where(e)} (${e.verdict}: ${e.reason})`,
      );
    knownFalseCount += kfHere;
    const head = `${run.pkg} ${run.version}: ${run.pythonFiles} .py files, ${run.findings.length} findings: ${matched} as expected, ${kfHere} known false (to fix), ${newOnes.length} new, ${gone.length} gone, ${changed.length} changed`;
    const bad = [...newOnes, ...gone, ...changed];
    if (bad.length) failures.push([head, ...bad].join("\n"));
    else notes.push(head);
  }
  for (const e of [...expected.findings, ...knownFalse.findings]) {
    if (!runs.some((r) => r.pkg === e.package)) failures.push(`${where(e)}: package not in the corpus run`);
  }
  if (knownFalseCount) {
    const byCode = new Map();
    for (const e of knownFalse.findings) byCode.set(e.code, (byCode.get(e.code) ?? 0) + 1);
    notes.push(
      `known false, to fix: ${knownFalseCount} (${[...byCode].map(([c, n]) => `${c} ${n}`).join(", ")}), listed with reproductions in test/corpus/debian-known-false.json`,
    );
  }
  return { failures, notes, knownFalse: knownFalseCount };
}

/**
 * Fetches and lints every package: { runs: [{ pkg, pinned, tree, version, drift, findings,
 * pythonFiles }], files } (`files`: how many the CLI checked in all). @throws CorpusUnavailable.
 */
export async function runCorpus() {
  const packages = await ensureCorpus();
  const { byTree, files } = await lintTrees(packages.map((p) => p.tree));
  return {
    runs: packages.map((p) => ({ ...p, findings: byTree.get(p.tree), pythonFiles: pythonFiles(p.tree).length })),
    files,
  };
}

/**
 * The whole check: { status: "passed" | "failed" | "skipped", text }. Skipped only for
 * CorpusUnavailable (the reason is in `text`); any other error is a failure.
 */
export async function checkCorpus() {
  let runs, files;
  try {
    ({ runs, files } = await runCorpus());
  } catch (e) {
    if (e instanceof CorpusUnavailable) return { status: "skipped", text: `Debian corpus skipped: ${e.message}` };
    return { status: "failed", text: `Debian corpus: ${e instanceof Error ? e.stack : String(e)}` };
  }
  const r = compare(readCorpusFile(EXPECTED_FILE), readCorpusFile(KNOWN_FALSE_FILE), runs);
  const text = [
    `gpu-pilot checked ${files} files of ${runs.length} Debian packages (${readCorpusFile(EXPECTED_FILE).suite})`,
    ...r.notes,
    ...r.failures.map((f) => `FAIL ${f}`),
  ].join("\n");
  return { status: r.failures.length ? "failed" : "passed", text };
}

/** `update`: rewrites both files from `runs`, keeping verdicts and reasons of findings still reported. */
function update(runs) {
  const expected = readCorpusFile(EXPECTED_FILE),
    knownFalse = readCorpusFile(KNOWN_FALSE_FILE);
  const old = new Map([...expected.findings, ...knownFalse.findings].map((e) => [keyOf(e), e]));
  const nextExp = [],
    nextKf = [];
  for (const run of runs) {
    expected.packages[run.pkg] = run.version;
    for (const f of run.findings) {
      const a = {
        package: run.pkg,
        version: run.version,
        file: f.file,
        line: f.line,
        column: f.column,
        code: f.code,
        severity: f.severity,
      };
      const e = old.get(keyOf(a));
      if (e?.verdict === "false") nextKf.push({ ...e, ...a });
      else
        nextExp.push(
          e
            ? { ...a, verdict: e.verdict, reason: e.reason }
            : { ...a, verdict: "unreviewed", reason: "", message: f.message },
        );
    }
  }
  writeFileSync(EXPECTED_FILE, JSON.stringify({ ...expected, findings: nextExp }, null, 2) + "\n");
  writeFileSync(
    KNOWN_FALSE_FILE,
    JSON.stringify({ ...knownFalse, packages: expected.packages, findings: nextKf }, null, 2) + "\n",
  );
  return {
    expected: nextExp.length,
    knownFalse: nextKf.length,
    unreviewed: nextExp.filter((e) => e.verdict === "unreviewed").length,
  };
}

/** The command line (see the top of this file); no top-level await, so that the TypeScript tests can import this module. */
async function cli() {
  const cmd = process.argv[2] ?? "check";
  try {
    if (cmd === "check") {
      const r = await checkCorpus();
      console.log(r.text);
      process.exitCode = r.status === "passed" ? 0 : r.status === "skipped" ? EXIT_SKIPPED : 1;
    } else if (cmd === "fetch") {
      for (const p of await ensureCorpus())
        console.log(
          `${p.pkg} ${p.version}${p.drift ? ` (pinned ${p.pinned} is gone from the archive)` : ""}: ${p.tree}`,
        );
    } else if (cmd === "update") {
      const r = update((await runCorpus()).runs);
      console.log(
        `wrote ${relative(ROOT, EXPECTED_FILE)} (${r.expected}, ${r.unreviewed} unreviewed: give each a verdict and a reason) and ${relative(ROOT, KNOWN_FALSE_FILE)} (${r.knownFalse})`,
      );
    } else {
      console.error(`unknown command "${cmd}" (check | fetch | update)`);
      process.exitCode = 2;
    }
  } catch (e) {
    if (e instanceof CorpusUnavailable) {
      console.log(`Debian corpus skipped: ${e.message}`);
      process.exitCode = EXIT_SKIPPED;
    } else throw e;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) void cli();
