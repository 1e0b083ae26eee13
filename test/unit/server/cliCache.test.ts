/**
 * The CLI's result cache (server/src/cliCache.ts): a second run over unchanged files reuses their
 * results and prints exactly what a run without the cache prints; any change to a file, its
 * options or the build is a miss; a broken or unwritable cache costs a note, never output.
 */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT, CASES, projectTree, WRITER_PROJECT } from "../support/helpers";
import {
  ResultCache,
  RACY_MS,
  buildIdOf,
  cacheDirOf,
  isCachedDiagnostic,
  sha1,
  stampOf,
} from "../../../server/src/cliCache";

const CLI = join(ROOT, "dist", "cli.js");

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
});

/** A project folder with a cache folder of its own; `run` checks in it (cwd = the project). */
function project(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "gp-cache-"));
  const src = join(dir, "src");
  const cache = join(dir, "cache");
  mkdirSync(src);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(src, name), text);
  const run = (args: string[], cli = CLI) =>
    spawnSync(process.execPath, [cli, "check", ...args], {
      encoding: "utf8",
      cwd: dir,
      env: { ...process.env, GPU_PILOT_CACHE_DIR: cache, GPU_PILOT_WORKERS: "1" },
    });
  /** How many files the last `--statistics` run took from the cache. */
  const fromCache = (stderr: string) => Number(/(\d+) of \d+ files from the cache/.exec(stderr)?.[1] ?? NaN);
  return { dir, src, cache, run, fromCache };
}

const BAD = readFileSync(join(CASES, "env_after_is_available.py"), "utf8");
/** A diagnostic of the shape the CLI caches (cli.ts JsonDiagnostic). */
const DIAGNOSTIC = {
  cell: null,
  code: "GPU001",
  end_location: { row: 1, column: 5 },
  filename: "a.py",
  fix: null,
  location: { row: 1, column: 1 },
  message: "m",
  noqa_row: 1,
  url: "https://example.invalid/GPU001",
  severity: "error",
};
// The same bytes with lines 5 and 6 swapped: the same size, other findings.
const SWAPPED = (() => {
  const l = BAD.split("\n");
  [l[4], l[5]] = [l[5], l[4]];
  return l.join("\n");
})();

test("a second run takes every unchanged file from the cache and prints exactly what --no-cache prints", () => {
  const p = project({ "bad.py": BAD, "good.py": readFileSync(join(CASES, "env_before_import_ok.py"), "utf8") });
  for (const format of ["json", "text", "sarif", "github"]) {
    const plain = p.run(["--no-cache", "--format", format, "src"]);
    const first = p.run(["--format", format, "--statistics", "src"]);
    const second = p.run(["--format", format, "--statistics", "src"]);
    assert.equal(first.status, 1, first.stderr);
    assert.equal(second.status, 1, second.stderr);
    assert.equal(first.stdout, plain.stdout, format);
    assert.equal(second.stdout, plain.stdout, format);
    assert.equal(p.fromCache(second.stderr), 2, second.stderr);
    // Nothing left to check: no parser is started and no worker runs.
    assert.match(
      second.stderr,
      /parsed 0 of 2 files; skipped 0 of 2 files without parsing .*; 2 of 2 files from the cache \(unchanged since an earlier run\); 0 workers/,
    );
  }
  assert.match(p.run(["--format", "json", "--statistics", "src"]).stderr, /parsed 0 of 2 files/);
  // The cache lives in the cache folder, not in the project.
  assert.deepEqual(readdirSync(p.src).sort(), ["bad.py", "good.py"]);
  assert.equal(readdirSync(join(p.cache, "v1")).filter((n) => n.endsWith(".json")).length, 1);
});

test("an edit that keeps the size, within the same second as the last check, is seen", () => {
  const p = project({ "a.py": BAD });
  const before = p.run(["--format", "json", "src"]);
  writeFileSync(join(p.src, "a.py"), SWAPPED);
  const after = p.run(["--format", "json", "--statistics", "src"]);
  const truth = p.run(["--no-cache", "--format", "json", "src"]);
  assert.equal(after.stdout, truth.stdout);
  assert.notEqual(after.stdout, before.stdout);
  assert.equal(p.fromCache(after.stderr), 0);
  // Rewriting the same bytes (a new mtime and ctime) is a hit by content.
  writeFileSync(join(p.src, "a.py"), SWAPPED);
  const same = p.run(["--format", "json", "--statistics", "src"]);
  assert.equal(same.stdout, truth.stdout);
  assert.equal(p.fromCache(same.stderr), 1);
});

test("a change of options is a miss: pyproject [tool.gpu-pilot], --select, --gpus; a config problem is still printed on a cached run", () => {
  const p = project({ "a.py": BAD });
  const base = JSON.parse(p.run(["--format", "json", "src"]).stdout).map((d: { code: string }) => d.code);
  assert.ok(base.includes("GPU001"), String(base));
  writeFileSync(join(p.dir, "pyproject.toml"), '[tool.gpu-pilot]\nignore = ["GPU001"]\n');
  const ignored = p.run(["--format", "json", "--statistics", "src"]);
  assert.equal(p.fromCache(ignored.stderr), 0);
  assert.equal(ignored.stdout, p.run(["--no-cache", "--format", "json", "src"]).stdout);
  assert.equal(
    JSON.parse(ignored.stdout).some((d: { code: string }) => d.code === "GPU001"),
    false,
  );
  const selected = p.run(["--format", "json", "--statistics", "--select", "GPU002", "src"]);
  assert.equal(p.fromCache(selected.stderr), 0);
  assert.equal(selected.stdout, p.run(["--no-cache", "--format", "json", "--select", "GPU002", "src"]).stdout);
  assert.equal(p.fromCache(p.run(["--format", "json", "--statistics", "--gpus", "1", "src"]).stderr), 0);
  assert.equal(p.fromCache(p.run(["--format", "json", "--statistics", "--gpus", "1", "src"]).stderr), 1);
  writeFileSync(join(p.dir, "pyproject.toml"), "[tool.gpu-pilot\n");
  const broken1 = p.run(["--format", "json", "src"]);
  const broken2 = p.run(["--format", "json", "--statistics", "src"]);
  assert.equal(p.fromCache(broken2.stderr), 1);
  for (const r of [broken1, broken2]) assert.match(r.stderr, /pyproject\.toml:\d+: TOML error/);
  assert.equal(broken2.stdout, broken1.stdout);
});

test("another build (a bundle at another path or with other bytes) does not reuse the results", () => {
  const p = project({ "a.py": BAD });
  p.run(["--format", "json", "src"]);
  const other = join(p.dir, "dist");
  mkdirSync(other);
  for (const f of ["cli.js", "tree-sitter.wasm", "tree-sitter-python.wasm"])
    copyFileSync(join(ROOT, "dist", f), join(other, f));
  const moved = p.run(["--format", "json", "--statistics", "src"], join(other, "cli.js"));
  assert.equal(p.fromCache(moved.stderr), 0, moved.stderr);
  assert.equal(moved.status, 1);
  assert.notEqual(buildIdOf(join(other, "cli.js")), buildIdOf(CLI));
  writeFileSync(join(other, "cli.js"), readFileSync(join(other, "cli.js"), "utf8") + "\n// changed\n");
  const a = buildIdOf(join(other, "cli.js"));
  writeFileSync(join(other, "tree-sitter-python.wasm"), "changed");
  assert.notEqual(buildIdOf(join(other, "cli.js")), a);
  // Running from the TypeScript sources: no build identity, so no cache.
  assert.equal(buildIdOf(join(ROOT, "server", "src", "cli.ts")), null);
});

test("an unwritable or corrupt cache is a note on stderr; the output and exit code are unchanged", () => {
  const p = project({ "a.py": BAD });
  const truth = p.run(["--no-cache", "--format", "json", "src"]);
  writeFileSync(join(p.dir, "not-a-folder"), "");
  const unwritable = p.run(["--format", "json", "--cache-dir", join(p.dir, "not-a-folder"), "src"]);
  assert.equal(unwritable.status, truth.status);
  assert.equal(unwritable.stdout, truth.stdout);
  assert.match(
    unwritable.stderr,
    /gpu-pilot: the result cache is not used: .*not-a-folder is a regular file; every file is checked\n/,
  );
  p.run(["--format", "json", "src"]);
  const [file] = readdirSync(join(p.cache, "v1")).filter((n) => n.endsWith(".json"));
  writeFileSync(join(p.cache, "v1", file), "{ not json");
  const corrupt = p.run(["--format", "json", "--statistics", "src"]);
  assert.equal(corrupt.stdout, truth.stdout);
  assert.equal(corrupt.status, truth.status);
  assert.match(corrupt.stderr, /the result cache .* is not valid JSON; it is rebuilt/);
  assert.equal(p.fromCache(corrupt.stderr), 0);
  const rebuilt = p.run(["--format", "json", "--statistics", "src"]);
  assert.equal(p.fromCache(rebuilt.stderr), 1);
  assert.doesNotMatch(rebuilt.stderr, /result cache/);
  // A malformed entry is a miss, not a crash.
  const data = JSON.parse(readFileSync(join(p.cache, "v1", file), "utf8"));
  for (const e of Object.values(data.entries) as Array<{ result: unknown }>) e.result = { diagnostics: "x" };
  writeFileSync(join(p.cache, "v1", file), JSON.stringify(data));
  const malformed = p.run(["--format", "json", "--statistics", "src"]);
  assert.equal(malformed.stdout, truth.stdout);
  assert.equal(p.fromCache(malformed.stderr), 0);
});

test("--no-cache, --fix and stdin neither read nor write the cache; a deleted file's entry goes", () => {
  const p = project({ "a.py": BAD, "b.py": BAD });
  p.run(["--no-cache", "src"]);
  assert.equal(existsSync(p.cache), false);
  const fixed = p.run(["--fix", "src"]);
  assert.equal(existsSync(p.cache), false, fixed.stderr);
  assert.notEqual(readFileSync(join(p.src, "a.py"), "utf8"), BAD);
  spawnSync(process.execPath, [CLI, "check", "--stdin-filename", "x.py"], {
    input: BAD,
    cwd: p.dir,
    env: { ...process.env, GPU_PILOT_CACHE_DIR: p.cache },
  });
  assert.equal(existsSync(p.cache), false);
  p.run(["src"]);
  const [file] = readdirSync(join(p.cache, "v1")).filter((n) => n.endsWith(".json"));
  const keys = () =>
    Object.keys(JSON.parse(readFileSync(join(p.cache, "v1", file), "utf8")).entries)
      .map((k) => k.slice(p.src.length + 1))
      .sort();
  assert.deepEqual(keys(), ["a.py", "b.py"]);
  rmSync(join(p.src, "b.py"));
  p.run(["src"]);
  assert.deepEqual(keys(), ["a.py"]);
});

test("ResultCache trusts a stamp only when the file was last changed well before the check; otherwise it compares the bytes", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-cache-unit-"));
  const file = join(dir, "a.py");
  writeFileSync(file, "x = 1\n");
  const stamp = stampOf(file)!;
  const changedMs = Number(BigInt(stamp.ctimeNs) / 1_000_000n);
  const result = { diagnostics: [DIAGNOSTIC], applied: 0, parsed: true };
  const notes: string[] = [];
  const opts = sha1("options");
  // Checked long after the last change: the same stamp is a hit even though the bytes differ now
  // (what a stamp-preserving rewrite would need to defeat: same size, mtime, ctime and inode).
  const settled = new ResultCache(join(dir, "c1"), dir, "build", (s) => notes.push(s));
  settled.record(file, stamp, changedMs + RACY_MS + 1000, opts, sha1("something else"), result);
  assert.deepEqual(settled.lookup(file, stamp, opts, Date.now()), { hit: true, result });
  assert.deepEqual(settled.lookup(file, stamp, sha1("other options"), Date.now()), { hit: false });
  // Checked within RACY_MS of the last change: the bytes are compared.
  const racy = new ResultCache(join(dir, "c2"), dir, "build", (s) => notes.push(s));
  racy.record(file, stamp, changedMs + 500, opts, sha1("something else"), result);
  assert.deepEqual(racy.lookup(file, stamp, opts, Date.now()), { hit: false });
  racy.record(file, stamp, changedMs + 500, opts, sha1("x = 1\n"), result);
  assert.deepEqual(racy.lookup(file, stamp, opts, Date.now()), { hit: true, result });
  // A file that cannot be stat'ed is never a hit.
  assert.deepEqual(racy.lookup(file, null, opts, Date.now()), { hit: false });
  // Saved and loaded again under the same build: kept; under another build: dropped.
  racy.save();
  assert.equal(new ResultCache(join(dir, "c2"), dir, "build", (s) => notes.push(s)).has(file), true);
  assert.equal(new ResultCache(join(dir, "c2"), dir, "another build", (s) => notes.push(s)).has(file), false);
  assert.deepEqual(notes, []);
});

test("two runs at once in one folder (pre-commit's parallel hook processes) keep each other's entries", () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-cache-merge-"));
  const [a, b] = ["a.py", "b.py"].map((n) => {
    const f = join(dir, n);
    writeFileSync(f, n);
    return f;
  });
  const result = { diagnostics: [], applied: 0, parsed: false };
  const opts = sha1("options");
  const one = new ResultCache(join(dir, "c"), dir, "build", () => {});
  const two = new ResultCache(join(dir, "c"), dir, "build", () => {});
  one.record(a, stampOf(a), Date.now(), opts, sha1("a.py"), result);
  two.record(b, stampOf(b), Date.now(), opts, sha1("b.py"), result);
  one.save();
  two.save();
  const after = new ResultCache(join(dir, "c"), dir, "build", () => {});
  assert.equal(after.has(a), true);
  assert.equal(after.has(b), true);
  // A file one run found gone under a folder it walked is dropped, whatever the other run kept.
  rmSync(b);
  const walk = new ResultCache(join(dir, "c"), dir, "build", () => {});
  walk.lookup(a, stampOf(a), opts, Date.now());
  walk.forgetMissingUnder([dir]);
  walk.save();
  const last = new ResultCache(join(dir, "c"), dir, "build", () => {});
  assert.equal(last.has(a), true);
  assert.equal(last.has(b), false);
});

test("parallel gpu-pilot processes on parts of one tree (pre-commit) leave every file cached", async () => {
  const files: Record<string, string> = {};
  for (let i = 1; i <= 12; i++) files[`f${i}.py`] = BAD;
  const p = project(files);
  const names = Object.keys(files);
  const env = { ...process.env, GPU_PILOT_CACHE_DIR: p.cache, GPU_PILOT_WORKERS: "1" };
  await Promise.all(
    [0, 1, 2, 3].map(
      (k) =>
        new Promise<void>((done, fail) => {
          const part = names.slice(k * 3, k * 3 + 3).map((n) => join("src", n));
          const child = spawn(process.execPath, [CLI, "check", ...part], { cwd: p.dir, env, stdio: "ignore" });
          child.on("error", fail);
          child.on("exit", (code) => (code === 1 ? done() : fail(new Error(`exit ${code}`))));
        }),
    ),
  );
  const all = p.run(["--statistics", "src"]);
  assert.equal(p.fromCache(all.stderr), 12, all.stderr);
  assert.deepEqual(
    readdirSync(join(p.cache, "v1")).filter((n) => !n.endsWith(".json") && n !== "key"),
    [],
    "no lock or temporary file is left",
  );
});

test(
  "a cached file replaced by a FIFO is refused as before, without blocking on it",
  { skip: process.platform === "win32" && "no mkfifo" },
  () => {
    const p = project({ "a.py": BAD });
    const file = join(p.src, "a.py");
    p.run([file]);
    rmSync(file);
    assert.equal(spawnSync("mkfifo", [file]).status, 0);
    const r = spawnSync(process.execPath, [CLI, "check", file], {
      encoding: "utf8",
      cwd: p.dir,
      timeout: 20_000,
      env: { ...process.env, GPU_PILOT_CACHE_DIR: p.cache },
    });
    assert.equal(r.signal, null, "it did not hang");
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /cannot read .*a\.py: .*not a regular file/i);
  },
);

test("the cache folder: GPU_PILOT_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache (LOCALAPPDATA on Windows)", () => {
  assert.equal(cacheDirOf({ GPU_PILOT_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" }, "linux"), "/c");
  assert.equal(cacheDirOf({ XDG_CACHE_HOME: "/x" }, "linux"), join("/x", "gpu-pilot"));
  assert.equal(
    cacheDirOf({ LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, "win32"),
    join("C:\\Users\\u\\AppData\\Local", "gpu-pilot"),
  );
  assert.match(cacheDirOf({}, "linux"), /[/\\]\.cache[/\\]gpu-pilot$/);
});

// Issue 46 item 5: the cache is input. Each poison below made a run trust it (a CI gate passing on
// a forged "no diagnostics" entry), crash with a stack trace, print a raw workflow command, take
// gigabytes or block; each is now a miss or no cache, with the output of a --no-cache run.
test("a diagnostic without a documentation URL (package.json names no repository: url null) is cached; a URL that is not text is not", () => {
  assert.equal(isCachedDiagnostic({ ...DIAGNOSTIC, url: null }), true);
  assert.equal(isCachedDiagnostic(DIAGNOSTIC), true);
  assert.equal(isCachedDiagnostic({ ...DIAGNOSTIC, url: 3 }), false);
  assert.equal(isCachedDiagnostic({ ...DIAGNOSTIC, url: "https://x/\u001b[31m" }), false);
});

test("poisoned cache entries are misses: forged, unsigned, [null], [{}], an unknown code or a workflow command in the code", () => {
  const p = project({ "a.py": BAD });
  const truth = p.run(["--no-cache", "--format", "github", "src"]);
  assert.notEqual(truth.status, 0);
  assert.equal(p.run(["--format", "github", "src"]).stdout, truth.stdout);
  const [file] = readdirSync(join(p.cache, "v1")).filter((n) => n.endsWith(".json"));
  const path = join(p.cache, "v1", file);
  const good = JSON.parse(readFileSync(path, "utf8"));
  const [[key, entry]] = Object.entries(good.entries) as Array<[string, Record<string, unknown>]>;
  const poisons: Array<[string, Record<string, unknown>]> = [
    [
      "no diagnostics, the right hashes, the old MAC",
      { ...entry, result: { diagnostics: [], applied: 0, parsed: true } },
    ],
    ["no MAC", (({ mac: _m, ...rest }) => rest)(entry)],
    ["[null]", { ...entry, result: { diagnostics: [null], applied: 0, parsed: true } }],
    ["[{}]", { ...entry, result: { diagnostics: [{}], applied: 0, parsed: true } }],
    [
      "a workflow command in the code",
      {
        ...entry,
        result: {
          diagnostics: [{ ...DIAGNOSTIC, code: "GPU001::warning::x\n::error::forged" }],
          applied: 0,
          parsed: true,
        },
      },
    ],
    [
      "an unknown severity",
      {
        ...entry,
        result: { diagnostics: [{ ...DIAGNOSTIC, severity: "fatal\n::error::x" }], applied: 0, parsed: true },
      },
    ],
  ];
  for (const [what, poisoned] of poisons) {
    writeFileSync(path, JSON.stringify({ ...good, entries: { [key]: poisoned } }));
    const r = p.run(["--format", "github", "--statistics", "src"]);
    assert.equal(r.stdout, truth.stdout, what);
    assert.equal(r.status, truth.status, what);
    assert.doesNotMatch(r.stderr, /\n\s+at /, what);
    assert.match(r.stderr, /1 entry of the result cache .* is malformed or not signed with its key/, what);
    assert.equal(p.fromCache(r.stderr), 0, what);
  }
});

test(
  "a cache file that is /dev/zero, a FIFO or a link, a linked or group-writable cache folder: no cache, nothing blocks",
  { skip: process.platform === "win32" },
  () => {
    const p = project({ "a.py": BAD });
    const truth = p.run(["--no-cache", "--format", "json", "src"]);
    p.run(["--format", "json", "src"]);
    const [file] = readdirSync(join(p.cache, "v1")).filter((n) => n.endsWith(".json"));
    const path = join(p.cache, "v1", file);
    const check = (what: string, pattern: RegExp, cacheDir = p.cache) => {
      const r = spawnSync(process.execPath, [CLI, "check", "--format", "json", "src"], {
        encoding: "utf8",
        cwd: p.dir,
        timeout: 60_000,
        env: { ...process.env, GPU_PILOT_CACHE_DIR: cacheDir, GPU_PILOT_WORKERS: "1" },
      });
      assert.equal(r.error, undefined, `${what}: ${r.error}`);
      assert.equal(r.stdout, truth.stdout, what);
      assert.equal(r.status, truth.status, what);
      assert.match(r.stderr, pattern, what);
    };
    rmSync(path);
    symlinkSync("/dev/zero", path);
    check("a link to /dev/zero", /the result cache is not used: .* is a symbolic link/);
    rmSync(path);
    spawnSync("mkfifo", [path]);
    check("a FIFO", /the result cache is not used: .* is a FIFO/);
    rmSync(path);
    const elsewhere = mkdtempSync(join(tmpdir(), "gp-cache-elsewhere-"));
    const linked = join(p.dir, "linked-cache");
    symlinkSync(elsewhere, linked);
    check("a linked cache folder", /the result cache is not used: .*linked-cache is a symbolic link/, linked);
    assert.deepEqual(readdirSync(elsewhere), [], "nothing written through the link");
    chmodSync(p.cache, 0o775);
    check(
      "a group-writable cache folder",
      /the result cache is not used: .* is writable by group or others \(mode 775\)/,
    );
  },
);

test("the writers' scan is kept in the cache: a second run over a changed caller reads only the changed module, with one thread and with two; an edited writer is scanned again and its finding goes", () => {
  const files: Record<string, string> = { ...WRITER_PROJECT };
  for (let i = 0; i < 6; i++) files[`pkg/m${i}.py`] = `def f${i}(x):\n    return x + ${i}\n`;
  const dirs = ["1", "2"].map((workers) => ({ workers, dir: projectTree(files) }));
  // A kept scan is trusted only for a stamp older than the run that made it by RACY_MS (as a
  // project's files are): wait that long once.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RACY_MS + 200);
  for (const { workers, dir } of dirs) {
    const cache = join(dir, "cache");
    const run = (...paths: string[]) => {
      const r = spawnSync(
        process.execPath,
        [CLI, "check", "--format", "json", "--statistics", ...paths.map((p) => join(dir, p))],
        { encoding: "utf8", cwd: dir, env: { ...process.env, GPU_PILOT_CACHE_DIR: cache, GPU_PILOT_WORKERS: workers } },
      );
      const scan = /read (\d+) project modules? and took (\d+) from the cache/.exec(r.stderr);
      return {
        found: (JSON.parse(r.stdout) as Array<{ code: string; filename: string; location: { row: number } }>).map(
          (d) => `${d.filename.slice(dir.length + 1)}:${d.location.row} ${d.code}`,
        ),
        read: Number(scan?.[1] ?? 0),
        kept: Number(scan?.[2] ?? 0),
      };
    };
    const first = run(".");
    assert.deepEqual(first.found, ["run.py:5 GPU001"], `${workers}: ${JSON.stringify(first)}`);
    assert.deepEqual([first.read, first.kept], [9, 0], `${workers} worker(s), first run`);
    // The caller changes (a comment: its result misses); the other modules' scans are kept.
    writeFileSync(join(dir, "run.py"), files["run.py"] + "# again\n");
    const second = run("run.py");
    assert.deepEqual(second.found, ["run.py:5 GPU001"]);
    assert.deepEqual([second.read, second.kept], [1, 8], `${workers} worker(s), second run`);
    // The writer no longer writes first: scanned again, and the caller's finding goes.
    writeFileSync(join(dir, "tools/env.py"), "import os\n\n\ndef pin_gpu():\n    print(os.getpid())\n");
    writeFileSync(join(dir, "run.py"), files["run.py"] + "# and again\n");
    const third = run("run.py");
    assert.deepEqual(third.found, []);
    assert.deepEqual([third.read, third.kept], [2, 7], `${workers} worker(s), third run`);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a helper that writes a device string's index (GPU005's writers) is kept in the cache: the second run takes every module from it, with no note of a malformed entry (the walkthrough's repro)", () => {
  const dir = projectTree({
    "pkg/__init__.py": "",
    "pkg/utils.py":
      'import os\n\n\ndef pin_gpu(cfg):\n    if cfg.device.startswith("cuda:"):\n        index = cfg.device.split(":")[1]\n        os.environ["CUDA_VISIBLE_DEVICES"] = index\n',
    "run.py": "from pkg.utils import pin_gpu\n\npin_gpu(cfg)\n",
  });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RACY_MS + 200);
  const run = () =>
    spawnSync(process.execPath, [CLI, "check", "--statistics", "."], {
      encoding: "utf8",
      cwd: dir,
      env: { ...process.env, GPU_PILOT_CACHE_DIR: join(dir, "cache") },
    }).stderr;
  assert.match(run(), /read 3 project modules and took 0 from the cache/);
  const second = run();
  assert.doesNotMatch(second, /malformed/);
  assert.match(second, /read 0 project modules and took 3 from the cache/);
  rmSync(dir, { recursive: true, force: true });
});

test("a kept result depends on the project's writer names: a module that starts writing a startup variable first turns its caller's kept 'no finding' into GPU001 (a fresh user's repro), with one thread and two", () => {
  for (const workers of ["1", "2"]) {
    const dir = projectTree({
      "pkg/__init__.py": "",
      "pkg/envsetup.py": "import os\n\n\ndef setup():\n    print(os.getpid())\n",
      "train.py": "import torch\nfrom pkg.envsetup import setup\n\ntorch.cuda.is_available()\nsetup()\n",
    });
    const cache = join(dir, "cache");
    const run = () => {
      const r = spawnSync(process.execPath, [CLI, "check", "--format", "json", "--statistics", "."], {
        encoding: "utf8",
        cwd: dir,
        env: { ...process.env, GPU_PILOT_CACHE_DIR: cache, GPU_PILOT_WORKERS: workers },
      });
      return (JSON.parse(r.stdout) as Array<{ code: string; filename: string; location: { row: number } }>).map(
        (d) => `${d.filename.slice(dir.length + 1)}:${d.location.row} ${d.code}`,
      );
    };
    assert.deepEqual(run(), []);
    assert.deepEqual(run(), [], "the second run, from the cache");
    writeFileSync(
      join(dir, "pkg", "envsetup.py"),
      'import os\n\n\ndef setup():\n    os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    );
    assert.deepEqual(run(), ["train.py:5 GPU001"], `${workers} worker(s): the caller is checked again`);
    assert.deepEqual(run(), ["train.py:5 GPU001"], `${workers} worker(s): and kept so`);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("GPU039's documented launches: a Markdown document added beside a file, or edited, makes its cached result stale", () => {
  const serve =
    "import torch\nimport torch.distributed as dist\n\n\ndef setup():\n    dist.init_process_group('nccl')\n    torch.cuda.set_device(dist.get_rank())\n";
  const p = project({ "serve.py": serve });
  mkdirSync(join(p.dir, ".git"));
  const codes = (args: string[]) => {
    const r = p.run(["--format", "json", "--statistics", ...args, "src"]);
    return { codes: JSON.parse(r.stdout).map((d: { code: string }) => d.code), cached: p.fromCache(r.stderr) };
  };
  assert.deepEqual(codes([]), { codes: ["GPU039"], cached: 0 });
  assert.deepEqual(codes([]), { codes: ["GPU039"], cached: 1 });
  // A README added: the file's options list it, so the cached result is not reused.
  writeFileSync(join(p.src, "README.md"), "# Serve\n\nSee the docs.\n");
  assert.deepEqual(codes([]), { codes: ["GPU039"], cached: 0 });
  assert.deepEqual(codes([]), { codes: ["GPU039"], cached: 1 });
  // The README edited to document a one-node launch: it is a dependency of the result.
  writeFileSync(
    join(p.src, "README.md"),
    "# Serve\n\n```bash\ntorchrun --standalone --nproc_per_node=2 serve.py\n```\n",
  );
  assert.deepEqual(codes([]), { codes: [], cached: 0 });
  assert.deepEqual(codes([]).codes, []);
  assert.deepEqual(codes(["--no-cache"]).codes, []);
});

test("a shell script's kept result depends on the files its launch rules read: an edited sourced env file (GPU040) and an edited accelerate config make it stale", () => {
  const p = project({
    "env.sh": "export NPROC=2\n",
    "run.sh":
      "#!/bin/bash\nsource env.sh\naccelerate launch --config_file acc.yaml --num_processes=${NPROC} train.py\n",
    "acc.yaml": "num_machines: 1\n",
    "train.py": "print('train')\n",
  });
  const codes = (args: string[]) => {
    const r = p.run(["--format", "json", "--statistics", "--gpus", "2", ...args, "src/run.sh"]);
    return { codes: JSON.parse(r.stdout).map((d: { code: string }) => d.code), cached: p.fromCache(r.stderr) };
  };
  assert.deepEqual(codes([]), { codes: [], cached: 0 });
  assert.deepEqual(codes([]), { codes: [], cached: 1 });
  // Four processes on a two-GPU machine, said in the sourced file only.
  writeFileSync(join(p.src, "env.sh"), "export NPROC=4\n");
  assert.deepEqual(codes([]), { codes: ["GPU040"], cached: 0 });
  assert.deepEqual(codes([]), { codes: ["GPU040"], cached: 1 });
  // Two machines in the config: two processes per node again.
  writeFileSync(join(p.src, "acc.yaml"), "num_machines: 2\n");
  assert.deepEqual(codes([]), { codes: [], cached: 0 });
});

test("a kept result that depended on a file being absent goes stale when it appears: accelerate's default config created after a GPU040 finding was cached", () => {
  const hf = mkdtempSync(join(tmpdir(), "gp-cache-hf-"));
  const p = project({
    "run.sh": "#!/bin/bash\naccelerate launch train.py\n",
    "train.py": 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\n',
  });
  const before = process.env.HF_HOME;
  process.env.HF_HOME = hf;
  try {
    const codes = () => {
      const r = p.run(["--format", "json", "--statistics", "--gpus", "2", "src/run.sh"]);
      return { codes: JSON.parse(r.stdout).map((d: { code: string }) => d.code), cached: p.fromCache(r.stderr) };
    };
    // No default config: one process per GPU (2) against train.py's one visible GPU. Kept, though
    // the config it looked for does not exist (before, such a result was not kept at all).
    assert.deepEqual(codes(), { codes: ["GPU040"], cached: 0 });
    assert.deepEqual(codes(), { codes: ["GPU040"], cached: 1 });
    // The default config appears: the launch's count is now the config's; the kept result is stale.
    mkdirSync(join(hf, "accelerate"));
    writeFileSync(join(hf, "accelerate", "default_config.yaml"), "num_processes: 1\n");
    assert.deepEqual(codes(), { codes: [], cached: 0 });
    assert.deepEqual(codes(), { codes: [], cached: 1 });
  } finally {
    if (before === undefined) delete process.env.HF_HOME;
    else process.env.HF_HOME = before;
  }
});
