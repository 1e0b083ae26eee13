import assert from "node:assert/strict";
import { test } from "node:test";
import type { CorpusFile, CorpusRun } from "../../../scripts/debian-corpus.mjs";

// An ES module that imports execa (ESM only): loaded with import(), as the client loads execa.
const corpus = import("../../../scripts/debian-corpus.mjs");

// The Debian real-code corpus (issue 16): fetched with apt-get download + dpkg -x into .cache/debian/,
// linted by the CLI, compared with test/corpus/debian-expected.json and debian-known-false.json.
// Skipped (with the reason) only where the archive cannot be reached: no apt-get, empty lists, offline.
test("Debian corpus: the CLI's findings are the reviewed ones, and every known-false one is still listed", async (t) => {
  const { checkCorpus } = await corpus;
  const r = await checkCorpus();
  t.diagnostic(r.text);
  if (r.status === "skipped") {
    t.skip(r.text);
    return;
  }
  assert.equal(r.status, "passed", r.text);
});

test("Debian corpus files: every expected finding is true or noise with a reason, every known-false one has a reproduction", async () => {
  const { readCorpusFile, EXPECTED_FILE, KNOWN_FALSE_FILE } = await corpus;
  const exp = readCorpusFile(EXPECTED_FILE),
    kf = readCorpusFile(KNOWN_FALSE_FILE);
  assert.deepEqual(Object.keys(exp.packages).sort(), [
    "python3-dask",
    "python3-numba",
    "python3-skorch",
    "python3-torch",
    "python3-torchaudio",
    "python3-torchvision",
  ]);
  for (const e of exp.findings)
    assert.ok(["true", "noise"].includes(e.verdict) && e.reason.length > 20, JSON.stringify(e));
  for (const e of kf.findings)
    assert.ok(e.verdict === "false" && e.reason.length > 20 && (e.repro ?? "").includes("\n"), JSON.stringify(e));
});

const base: CorpusFile = {
  suite: "test suite",
  packages: { p: "1.0-1" },
  findings: [
    {
      package: "p",
      version: "1.0-1",
      file: "usr/a.py",
      line: 3,
      column: 1,
      code: "GPU001",
      severity: "error",
      verdict: "true",
      reason: "the write comes after torch.cuda.init()",
    },
  ],
};
const kfBase: CorpusFile = {
  suite: "test suite",
  packages: { p: "1.0-1" },
  findings: [
    {
      package: "p",
      version: "1.0-1",
      file: "usr/b.py",
      line: 9,
      column: 5,
      code: "GPU011",
      severity: "error",
      verdict: "false",
      reason: "a gloo group, not a GPU script at all",
      repro: "a\nb",
    },
  ],
};
const finding = (file: string, line: number, column: number, code: string, severity = "error") => ({
  file,
  line,
  column,
  code,
  severity,
  message: "m",
});
const run = (findings: CorpusRun["findings"], over: Partial<CorpusRun> = {}) => [
  { pkg: "p", pinned: "1.0-1", version: "1.0-1", drift: null, findings, pythonFiles: 2, ...over },
];

test("compare: the reviewed findings and the known-false ones reported as before pass, the known-false ones counted", async () => {
  const { compare } = await corpus;
  const r = compare(base, kfBase, run([finding("usr/a.py", 3, 1, "GPU001"), finding("usr/b.py", 9, 5, "GPU011")]));
  assert.deepEqual(r.failures, []);
  assert.equal(r.knownFalse, 1);
  assert.match(
    r.notes.join("\n"),
    /p 1\.0-1: 2 \.py files, 2 findings: 1 as expected, 1 known false \(to fix\), 0 new, 0 gone, 0 changed/,
  );
  assert.match(r.notes.join("\n"), /known false, to fix: 1 \(GPU011 1\)/);
});

test("compare: a new, a gone and a changed finding each fail with a line saying which", async () => {
  const { compare } = await corpus;
  const r = compare(
    base,
    kfBase,
    run([
      finding("usr/a.py", 3, 1, "GPU001", "warning"),
      finding("usr/b.py", 9, 5, "GPU011"),
      finding("usr/c.py", 1, 1, "GPU003"),
    ]),
  );
  assert.equal(r.failures.length, 1);
  assert.match(r.failures[0], /1 new, 0 gone, 1 changed/);
  assert.match(r.failures[0], /new {6}p usr\/c\.py:1:1 GPU003 error: m/);
  assert.match(r.failures[0], /changed {2}p usr\/a\.py:3:1 GPU001: severity error -> warning/);
  const g = compare(base, kfBase, run([finding("usr/b.py", 9, 5, "GPU011")]));
  assert.match(g.failures[0], /gone {5}p usr\/a\.py:3:1 GPU001 \(true: the write comes after torch\.cuda\.init\(\)\)/);
});

test("compare: a known-false finding no longer reported fails, saying to remove it from the list", async () => {
  const { compare } = await corpus;
  const r = compare(base, kfBase, run([finding("usr/a.py", 3, 1, "GPU001")]));
  assert.match(
    r.failures.join("\n"),
    /fixed {4}p usr\/b\.py:9:5 GPU011 \(known false, no longer reported: remove it from debian-known-false\.json\)/,
  );
});

test("compare: a version drift fails even when the findings are the same, naming both versions", async () => {
  const { compare } = await corpus;
  const r = compare(
    base,
    kfBase,
    run([finding("usr/a.py", 3, 1, "GPU001"), finding("usr/b.py", 9, 5, "GPU011")], {
      version: "1.0-2",
      drift: "1.0-2",
    }),
  );
  assert.equal(r.failures.length, 1);
  assert.match(
    r.failures[0],
    /p: the Debian archive now has version 1\.0-2, not the pinned 1\.0-1 \(suite: test suite\)/,
  );
});

test("compare: an unreviewed or false verdict in the expected file, and a missing reason, fail", async () => {
  const { compare } = await corpus;
  const bad: CorpusFile = {
    ...base,
    findings: [
      { ...base.findings[0], verdict: "unreviewed", reason: "" },
      { ...base.findings[0], line: 4, verdict: "false" },
    ],
  };
  const r = compare(
    bad,
    kfBase,
    run([
      finding("usr/a.py", 3, 1, "GPU001"),
      finding("usr/a.py", 4, 1, "GPU001"),
      finding("usr/b.py", 9, 5, "GPU011"),
    ]),
  );
  const text = r.failures.join("\n");
  assert.match(text, /usr\/a\.py:3:1 GPU001: no reason given/);
  assert.match(text, /usr\/a\.py:3:1 GPU001: verdict "unreviewed"/);
  assert.match(text, /usr\/a\.py:4:1 GPU001: verdict "false" \(give true or noise/);
});
