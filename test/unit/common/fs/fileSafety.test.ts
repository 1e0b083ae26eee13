// Issue 18, file safety: special files, encodings, notebooks byte for byte, atomic writes,
// symlinks. Every scenario that could hang or exhaust memory runs in a child process with a
// timeout, so a regression fails the test instead of hanging the run.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync, execFileSync } from "node:child_process";
import {
  mkdtempSync,
  writeFileSync,
  symlinkSync,
  existsSync,
  mkdirSync,
  readFileSync,
  chmodSync,
  chownSync,
  statSync,
  readdirSync,
  writeSync,
  lstatSync,
} from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT } from "../../support/helpers";
import { readWorkspaceFile, replaceFile } from "../../../../common/src/fs/workspaceFile";
import { codingCookie, decodeSource } from "../../../../server/src/engine/sourceEncoding";
import { withCellSources } from "../../../../server/src/engine/notebook";

const CLI = join(ROOT, "dist", "cli.js");
const tmp = (p = "gp-safe-") => mkdtempSync(join(tmpdir(), p));
const cli = (args: string[], cwd = ROOT) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd, timeout: 30_000 });
const posix = process.platform !== "win32";
const mkfifo = (p: string) => execFileSync("mkfifo", [p]);
/** Runs `code` (TypeScript, through tsx) in a child process; returns its status, stdout and whether it timed out. */
const child = (code: string) => {
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", code], {
    encoding: "utf8",
    cwd: ROOT,
    timeout: 20_000,
    maxBuffer: 1 << 20,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, timedOut: r.error !== undefined || r.signal !== null };
};

before(() => {
  if (!existsSync(CLI)) spawnSync(process.execPath, [join(ROOT, "esbuild.mjs")], { cwd: ROOT, stdio: "inherit" });
});

test("readWorkspaceFile: regular files only, with a size cap, and a reason when refused", { skip: !posix }, () => {
  const dir = tmp();
  writeFileSync(join(dir, "ok.txt"), "torch==2.1.0\n");
  const ok = readWorkspaceFile(join(dir, "ok.txt"), { maxBytes: 100 });
  assert.ok(ok.ok);
  assert.equal(ok.ok && ok.bytes.toString("utf8"), "torch==2.1.0\n");
  const big = readWorkspaceFile(join(dir, "ok.txt"), { maxBytes: 5 });
  assert.deepEqual(big, { ok: false, reason: "it is 13 bytes, over the 5-byte limit", code: "too-large", size: 13 });
  symlinkSync("/dev/zero", join(dir, "zero.txt"));
  assert.deepEqual(readWorkspaceFile(join(dir, "zero.txt"), { maxBytes: 100 }), {
    ok: false,
    reason: "not a regular file (a character device)",
    code: "not-regular",
  });
  mkfifo(join(dir, "fifo.txt"));
  assert.deepEqual(readWorkspaceFile(join(dir, "fifo.txt"), { maxBytes: 100 }), {
    ok: false,
    reason: "not a regular file (a FIFO)",
    code: "not-regular",
  });
  mkdirSync(join(dir, "d"));
  assert.deepEqual(readWorkspaceFile(join(dir, "d"), { maxBytes: 100 }), {
    ok: false,
    reason: "not a regular file (a folder)",
    code: "not-regular",
  });
  const missing = readWorkspaceFile(join(dir, "missing.txt"), { maxBytes: 100 });
  assert.equal(missing.ok, false);
  assert.equal(!missing.ok && missing.code, "ENOENT");
});

test(
  "the torch-pin lookup ignores requirements.txt -> /dev/zero and a FIFO environment.yml (no hang, no memory blow-up)",
  { skip: !posix },
  () => {
    const dir = tmp();
    symlinkSync("/dev/zero", join(dir, "requirements.txt"));
    mkfifo(join(dir, "environment.yml"));
    mkfifo(join(dir, "requirements-dev.txt"));
    writeFileSync(join(dir, "requirements-gpu.txt"), "torch==2.1.0\n");
    const r = child(
      `const { projectPinsTorchBelow24 } = require("./server/src/engine/config.ts"); console.log(JSON.stringify(projectPinsTorchBelow24(${JSON.stringify(dir)})));`,
    );
    assert.equal(r.timedOut, false, "the lookup hung");
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), "true", "the regular requirements file is still read");
  },
);

test("a pyproject.toml that is a FIFO or /dev/zero is a configuration problem, not a hang", { skip: !posix }, () => {
  for (const make of [(p: string) => mkfifo(p), (p: string) => symlinkSync("/dev/zero", p)]) {
    const dir = tmp();
    make(join(dir, "pyproject.toml"));
    writeFileSync(join(dir, "a.py"), "import torch\n");
    const r = child(
      `const { resolveLintOptions } = require("./server/src/engine/options.ts"); console.log(JSON.stringify(resolveLintOptions(${JSON.stringify(join(dir, "a.py"))}, {}).problems));`,
    );
    assert.equal(r.timedOut, false, "config lookup hung");
    assert.equal(r.status, 0, r.stderr);
    const problems = JSON.parse(r.stdout) as Array<{ file: string; message: string }>;
    assert.equal(problems.length, 1);
    assert.match(problems[0].message, /^not read: not a regular file \(a (FIFO|character device)\)$/);
  }
});

test(
  "CLI: a source that is a link to /dev/zero or a FIFO is refused by name, skipped with a note in a folder",
  { skip: !posix },
  () => {
    const dir = tmp();
    symlinkSync("/dev/zero", join(dir, "zero.py"));
    mkfifo(join(dir, "pipe.ipynb"));
    writeFileSync(
      join(dir, "real.py"),
      'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n',
    );
    const named = cli(["check", join(dir, "zero.py")]);
    assert.equal(named.error, undefined, "the CLI hung");
    assert.equal(named.status, 2);
    assert.match(named.stderr, /cannot read .*zero\.py: not a regular file \(a character device\)/);
    const fifo = cli(["check", join(dir, "pipe.ipynb")]);
    assert.equal(fifo.error, undefined, "the CLI hung on a FIFO");
    assert.equal(fifo.status, 2);
    assert.match(fifo.stderr, /cannot read .*pipe\.ipynb: not a regular file \(a FIFO\)/);
    const folder = cli(["check", "--format", "json", dir]);
    assert.equal(folder.error, undefined, "the folder scan hung");
    assert.equal(folder.status, 1, folder.stderr);
    const found = JSON.parse(folder.stdout) as Array<{ code: string; filename: string }>;
    assert.deepEqual([...new Set(found.map((d) => d.filename.slice(dir.length + 1)))], ["real.py"]);
    assert.ok(found.some((d) => d.code === "GPU001"));
    assert.match(folder.stderr, /skipped .*pipe\.ipynb: not a regular file \(a FIFO\)/);
    assert.match(folder.stderr, /skipped .*zero\.py: not a regular file \(a character device\)/);
  },
);

// ---- Item 5: encodings. Fixed bytes are the original bytes with only the edits changed.
const GPU001_SRC = (head: string, tail: string) =>
  `${head}import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # ${tail}\n`;
const GPU001_FIXED = (head: string, tail: string) =>
  `${head}import os\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"  # ${tail}\nimport torch\ntorch.cuda.init()\n`;

test("--fix refuses a file that is not valid UTF-8 and has no coding cookie: not a byte changes, findings still reported", () => {
  const dir = tmp();
  const f = join(dir, "latin.py");
  const bytes = Buffer.from(GPU001_SRC("# caf\xe9\n", "na\xefve"), "latin1");
  writeFileSync(f, bytes);
  const r = cli(["check", "--preview", "--fix", "--format", "json", f]);
  assert.equal(r.status, 1, r.stderr);
  assert.deepEqual(readFileSync(f), bytes, "the file is untouched");
  assert.ok((JSON.parse(r.stdout) as Array<{ code: string }>).some((d) => d.code === "GPU001"));
  assert.match(r.stderr, /latin\.py: not fixed: not valid UTF-8 \(byte 0xE9 at line 1\) and no PEP 263 coding cookie/);
});

test("--fix honours a PEP 263 cookie: latin-1 and cp1252 bytes outside the edits stay as they were", () => {
  for (const [cookie, head, tail] of [
    ["# -*- coding: latin-1 -*-\n", "# caf\xe9\n", "na\xefve \xff"],
    ["# vim: set fileencoding=cp1252 :\n", "# price \x80 5\n", "\x93quoted\x94"],
    ["#!/usr/bin/env python\n# coding=iso-8859-15\n", "# \xa4\n", "\xbd"],
  ]) {
    const dir = tmp();
    const f = join(dir, "enc.py");
    writeFileSync(f, Buffer.from(GPU001_SRC(cookie + head, tail), "latin1"));
    const r = cli(["check", "--preview", "--fix", f]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.deepEqual(readFileSync(f), Buffer.from(GPU001_FIXED(cookie + head, tail), "latin1"), cookie);
  }
});

test("--fix on UTF-8 keeps a BOM and CRLF line ends; a cookie for a multi-byte encoding is linted but not fixed", () => {
  const dir = tmp();
  const f = join(dir, "bom.py");
  const src = "\ufeff" + GPU001_SRC("# é\r\n", "ü").replace(/\n/g, "\r\n").replace(/\r\r/g, "\r");
  writeFileSync(f, src);
  const r = cli(["check", "--preview", "--fix", f]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(
    readFileSync(f, "utf8"),
    "\ufeff" + GPU001_FIXED("# é\r\n", "ü").replace(/\n/g, "\r\n").replace(/\r\r/g, "\r"),
  );
  const sj = join(dir, "sjis.py");
  const sjBytes = Buffer.concat([
    Buffer.from("# coding: shift_jis\n# "),
    Buffer.from([0x82, 0xa0]),
    Buffer.from("\n" + GPU001_SRC("", "x")),
  ]);
  writeFileSync(sj, sjBytes);
  const s = cli(["check", "--preview", "--fix", "--format", "json", sj]);
  assert.equal(s.status, 1, s.stderr);
  assert.deepEqual(readFileSync(sj), sjBytes);
  assert.match(s.stderr, /sjis\.py: not fixed: GPU Pilot does not write files in shift_jis \(PEP 263 cookie, line 1\)/);
  const d = (JSON.parse(s.stdout) as Array<{ code: string; location: { row: number } }>).find(
    (x) => x.code === "GPU001",
  );
  assert.equal(d?.location.row, 6, "the shift_jis text was decoded, lines kept");
});

test("--fix refuses a notebook or manifest that is not valid UTF-8, and says so", () => {
  const dir = tmp();
  const f = join(dir, "compose.yaml");
  const compose = (comment: string) =>
    `services:\n  train:\n    image: x\n    # ${comment}\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: "2"\n              capabilities: [gpu]\n`;
  const bytes = Buffer.from(compose("caf\xe9"), "latin1");
  writeFileSync(f, bytes);
  const r = cli(["check", "--preview", "--fix", f]);
  assert.deepEqual(readFileSync(f), bytes);
  assert.equal(r.status, 0, `information (a quoted count) does not fail the run: ${r.stderr}`);
  assert.match(r.stderr, /compose\.yaml: not fixed: not valid UTF-8 \(byte 0xE9 at line 4\)/);
  writeFileSync(f, compose("café"));
  assert.equal(cli(["check", "--preview", "--fix", f]).status, 0);
  assert.equal(readFileSync(f, "utf8"), compose("café").replace('count: "2"', "count: 2"), "valid UTF-8 is fixed");
  const nb = join(dir, "n.ipynb");
  const nbBytes = Buffer.from(
    JSON.stringify({
      cells: [
        { cell_type: "code", source: GPU001_SRC("# caf\xe9\n", "x"), metadata: {}, outputs: [], execution_count: null },
      ],
      metadata: {},
      nbformat: 4,
      nbformat_minor: 5,
    }),
    "latin1",
  );
  writeFileSync(nb, nbBytes);
  const n = cli(["check", "--preview", "--fix", nb]);
  assert.deepEqual(readFileSync(nb), nbBytes);
  assert.equal(n.status, 1, n.stderr);
  assert.match(n.stderr, /n\.ipynb: not fixed: not valid UTF-8 \(byte 0xE9 at line 1\)/);
});

test("decodeSource: CPython's cookie rules, and encode gives back the same bytes", () => {
  const b = (s: string) => Buffer.from(s, "latin1");
  assert.deepEqual(codingCookie(b("#!/usr/bin/python\n# -*- coding: cp1252 -*-\n")), { name: "cp1252", line: 2 });
  assert.equal(
    codingCookie(b("import os\n# coding: latin-1\n")),
    null,
    "line 2 counts only after a blank or comment line",
  );
  assert.deepEqual(codingCookie(b("\n# vim:fileencoding=utf_8\n")), { name: "utf_8", line: 2 });
  assert.equal(codingCookie(b("x = '# coding: latin-1'\n")), null);
  const bomLatin = decodeSource(
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b("# coding: latin-1\nx = 1\n")]),
    true,
  );
  assert.match(bomLatin.noFix ?? "", /UTF-8 BOM but its coding cookie says latin-1: Python would reject it/);
  const unknown = decodeSource(b("# coding: klingon\nx = 1\n"), true);
  assert.match(unknown.noFix ?? "", /does not know the encoding klingon \(PEP 263 cookie, line 1\)/);
  const ascii = decodeSource(b("# coding: ascii\nx = '\xe9'\n"), true);
  assert.match(ascii.noFix ?? "", /not valid ascii/);
  const cp = decodeSource(b("# coding: cp1252\n# \x80 \x93\x94 \xe9\n"), true);
  assert.equal(cp.text, "# coding: cp1252\n# € “” é\n");
  assert.deepEqual(cp.encode(cp.text), b("# coding: cp1252\n# \x80 \x93\x94 \xe9\n"));
  assert.equal(cp.encode(cp.text + "😀"), null, "a character cp1252 cannot hold");
  const latin = decodeSource(b("# coding: latin-1\n\xff\x80\n"), true);
  assert.equal(latin.encode(latin.text + "Ā"), null);
  assert.equal(decodeSource(b("x = 1\n"), false).encode("x = 2\n")?.toString(), "x = 2\n");
});

// ---- Item 6 (and issue 16): notebook fixes edit the cells' source spans in the original text.
const NB_CRLF = [
  "{",
  '  "metadata": {"big": 12345678901234567890, "ratio": 1.0, "name": "caf\\u00e9", "z": 1, "a": 2},',
  '  "cells": [',
  "    {",
  '      "source": "print(\'hi\')",',
  '      "cell_type": "code", "outputs": [], "metadata": {}, "execution_count": null',
  "    },",
  "    {",
  '      "cell_type": "code",',
  '      "source": [',
  '        "import os\\n",',
  '        "import torch\\n",',
  '        "torch.cuda.init()\\n",',
  '        "os.environ[\\"CUDA_VISIBLE_DEVICES\\"] = \\"1\\"\\n",',
  '        "print(\\"d\\u00e9j\\u00e0\\")"',
  "      ],",
  '      "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1.0\\n"]}], "metadata": {"n": 1e400}, "execution_count": 3',
  "    },",
  '    {"cell_type": "markdown", "metadata": {}, "source": ["# T\\u00edtulo\\n", "x"]}',
  "  ],",
  '  "nbformat": 4,',
  '  "nbformat_minor": 5',
  "}",
  "",
].join("\r\n");

test("--fix on a notebook changes only the fixed lines of the fixed cell: big integers, 1.0, key order, CRLF, escapes and indentation stay", () => {
  const dir = tmp();
  const f = join(dir, "nb.ipynb");
  writeFileSync(f, NB_CRLF);
  const r = cli(["check", "--preview", "--fix", f]);
  assert.equal(r.status, 0, r.stderr + r.stdout);
  const expected = NB_CRLF.replace(
    [
      '        "import torch\\n",',
      '        "torch.cuda.init()\\n",',
      '        "os.environ[\\"CUDA_VISIBLE_DEVICES\\"] = \\"1\\"\\n",',
    ].join("\r\n"),
    [
      '        "os.environ[\\"CUDA_DEVICE_ORDER\\"] = \\"PCI_BUS_ID\\"\\n",',
      '        "os.environ[\\"CUDA_VISIBLE_DEVICES\\"] = \\"1\\"\\n",',
      '        "import torch\\n",',
      '        "torch.cuda.init()\\n",',
    ].join("\r\n"),
  );
  assert.notEqual(expected, NB_CRLF);
  assert.equal(readFileSync(f, "utf8"), expected);
});

test("--fix on a notebook keeps a string source a string, and fixes a cell whose source is one line", () => {
  const dir = tmp();
  const f = join(dir, "s.ipynb");
  const src = 'import os\nimport torch\ntorch.cuda.init()\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\n';
  const nb = `{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null, "source": ${JSON.stringify(src)}}], "metadata": {"id": 9007199254740993}, "nbformat": 4, "nbformat_minor": 2}`;
  writeFileSync(f, nb);
  assert.equal(cli(["check", "--preview", "--fix", f]).status, 0);
  const fixed =
    'import os\nos.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\ntorch.cuda.init()\n';
  assert.equal(readFileSync(f, "utf8"), nb.replace(JSON.stringify(src), JSON.stringify(fixed)));
});

test("withCellSources: lines removed, added at either end, an empty list, a last line without a break", () => {
  const nb = (sources: unknown[]) =>
    JSON.stringify({ cells: sources.map((s) => ({ cell_type: "code", source: s })), nbformat: 4 }, null, 1);
  const cases: Array<[unknown, string]> = [
    [["a\n", "b\n", "c"], "a\nc"],
    [["a\n", "b\n", "c"], "x\na\nb\nc"],
    [["a\n", "b\n", "c"], "a\nb\nc\nd\n"],
    [["a\n", "b\n", "c"], "a\nb\ncd"],
    [["a\n", "b\n", "c"], ""],
    [[], "x\ny"],
    [["a\n"], "a\nb\n"],
    ["one string\n", "two\nlines\n"],
  ];
  for (const [source, text] of cases) {
    const json = nb([source, ["keep\n", "me"]]);
    const out = withCellSources(json, [text, "keep\nme"]);
    const parsed = JSON.parse(out) as { cells: Array<{ source: string | string[] }> };
    const got = parsed.cells[0].source;
    assert.equal(Array.isArray(got) ? got.join("") : got, text, JSON.stringify(source));
    assert.equal(Array.isArray(got), Array.isArray(source), "shape kept");
    if (Array.isArray(got))
      assert.ok(
        got.slice(0, -1).every((l) => l.endsWith("\n")),
        JSON.stringify(got),
      );
    assert.ok(out.endsWith(json.slice(json.indexOf('"keep\\n"') - 20)), "the other cell's bytes are untouched");
  }
  const json = nb([["a\n", "b\n", "c\n", "d"]]);
  assert.equal(
    withCellSources(json, ["a\nB\nc\nd"]),
    json.replace('"b\\n"', '"B\\n"'),
    "one changed line, one line of diff",
  );
});

// ---- Item 8: writes are atomic, keep mode and owner, and never overwrite an edit made meanwhile.
test("replaceFile: temp file and rename, mode and owner kept, nothing left behind", { skip: !posix }, () => {
  const dir = tmp();
  const f = join(dir, "a.py");
  writeFileSync(f, "old\n");
  chmodSync(f, 0o751);
  const root = process.getuid?.() === 0;
  if (root) chownSync(f, 65534, 65534); // as root, the owner can be kept only by chown: check it is
  const r = replaceFile(f, Buffer.from("new\n"), Buffer.from("old\n"));
  assert.deepEqual(r, { ok: true });
  assert.equal(readFileSync(f, "utf8"), "new\n");
  assert.equal(statSync(f).mode & 0o7777, 0o751);
  if (root) assert.deepEqual([statSync(f).uid, statSync(f).gid], [65534, 65534]);
  assert.deepEqual(readdirSync(dir), ["a.py"]);
});

test("replaceFile: a file changed since it was read is left alone", () => {
  const dir = tmp();
  const f = join(dir, "a.py");
  writeFileSync(f, "edited by the user meanwhile\n");
  const r = replaceFile(f, Buffer.from("fixed\n"), Buffer.from("old\n"));
  assert.deepEqual(r, { ok: false, reason: "it changed since it was read (an edit was saved meanwhile)" });
  assert.equal(readFileSync(f, "utf8"), "edited by the user meanwhile\n");
  assert.deepEqual(readdirSync(dir), ["a.py"]);
});

test("replaceFile: a full disk mid-write leaves the original whole and no temp file", () => {
  const dir = tmp();
  const f = join(dir, "a.py");
  writeFileSync(f, "old\n".repeat(1000));
  let calls = 0;
  const failing = (fd: number, buf: Buffer, off: number, len: number): number => {
    if (++calls > 1) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    return writeSync(fd, buf, off, Math.min(len, 10));
  };
  const r = replaceFile(f, Buffer.from("new\n".repeat(1000)), readFileSync(f), { write: failing });
  assert.deepEqual(r, { ok: false, reason: "cannot write it (ENOSPC); it was left as it was" });
  assert.equal(readFileSync(f, "utf8"), "old\n".repeat(1000));
  assert.deepEqual(readdirSync(dir), ["a.py"]);
});

test(
  "--fix on a read-only file: a message, the file untouched, the findings of the file as it is; other files still fixed",
  { skip: !posix },
  () => {
    const dir = tmp();
    const src = GPU001_SRC("", "x");
    writeFileSync(join(dir, "ro.py"), src);
    chmodSync(join(dir, "ro.py"), 0o444);
    writeFileSync(join(dir, "rw.py"), src);
    const r = cli(["check", "--preview", "--fix", "--format", "json", dir]);
    assert.equal(r.status, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /internal error|at .*\.js:\d+/);
    assert.match(r.stderr, /ro\.py: not fixed: it is read-only/);
    assert.equal(readFileSync(join(dir, "ro.py"), "utf8"), src);
    assert.equal(readFileSync(join(dir, "rw.py"), "utf8"), GPU001_FIXED("", "x"));
    const found = JSON.parse(r.stdout) as Array<{ code: string; filename: string }>;
    assert.ok(found.every((d) => d.filename.endsWith("ro.py")));
    assert.ok(
      found.some((d) => d.code === "GPU001"),
      "the read-only file's findings are those of its text",
    );
  },
);

// ---- Item 2: symlinks. Real paths are walked once; --fix never writes through a link out of the tree.
test("a folder scan with symlink loops lints every file once, and ends", { skip: !posix }, () => {
  const dir = tmp();
  writeFileSync(join(dir, "a.py"), GPU001_SRC("", "x"));
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "sub", "c.py"), GPU001_SRC("", "y"));
  symlinkSync("..", join(dir, "sub", "up"));
  symlinkSync(".", join(dir, "b"));
  symlinkSync(".", join(dir, "c"));
  symlinkSync("self", join(dir, "self"));
  symlinkSync("a.py", join(dir, "twice.py"));
  const r = cli(["check", "--format", "json", "--select", "GPU001", dir, join(dir, "a.py")]);
  assert.equal(r.error, undefined, "the scan hung");
  assert.equal(r.status, 1, r.stderr);
  const names = (JSON.parse(r.stdout) as Array<{ filename: string }>).map((d) => d.filename.slice(dir.length + 1));
  assert.deepEqual(names, ["a.py", "sub/c.py"]);
});

test(
  "--fix writes a file linked from outside the tree never, a file linked inside the tree at its real path",
  { skip: !posix },
  () => {
    const base = tmp();
    const tree = join(base, "tree");
    const outside = join(base, "outside");
    mkdirSync(tree);
    mkdirSync(outside);
    mkdirSync(join(tree, "pkg"));
    const src = GPU001_SRC("", "x");
    writeFileSync(join(outside, "x.py"), src);
    writeFileSync(join(tree, "pkg", "real.py"), src);
    symlinkSync(join(outside, "x.py"), join(tree, "link.py"));
    symlinkSync(join("pkg", "real.py"), join(tree, "inside.py"));
    const r = cli(["check", "--preview", "--fix", "--format", "json", tree]);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(readFileSync(join(outside, "x.py"), "utf8"), src, "the file outside the tree is untouched");
    assert.match(r.stderr, /link\.py: not fixed: it is a link to .*outside\/x\.py, outside .*tree/);
    assert.equal(readFileSync(join(tree, "pkg", "real.py"), "utf8"), GPU001_FIXED("", "x"));
    assert.ok(lstatSync(join(tree, "inside.py")).isSymbolicLink(), "the link inside the tree is still a link");
    const found = JSON.parse(r.stdout) as Array<{ filename: string; code: string }>;
    assert.deepEqual([...new Set(found.map((d) => d.filename.slice(tree.length + 1)))], ["link.py"]);
    const named = cli(["check", "--preview", "--fix", join(tree, "link.py")]);
    assert.equal(named.status, 1);
    assert.equal(
      readFileSync(join(outside, "x.py"), "utf8"),
      src,
      "named on the command line, still not written through",
    );
  },
);

// ---- Item 3: manifests have the same size limit as Python files.
test("a manifest over maxFileSizeKB is not linted: one GPU000 says why; fix-all leaves it alone", async () => {
  const { lintManifest, fixAllManifest } = await import("../../../../server/src/engine/manifests/lintManifest");
  const one =
    "      - name: c\n        image: x\n        resources:\n          requests:\n            nvidia.com/gpu: 1\n";
  const text = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: t\nspec:\n  template:\n    spec:\n      containers:\n${one.repeat(40)}`;
  const small = lintManifest(text, "yaml", { maxFileSizeKB: 0 });
  assert.equal(small.diagnostics.filter((d) => d.code === "GPU018").length, 40);
  const r = lintManifest(text, "yaml", { maxFileSizeKB: 1 });
  assert.deepEqual(
    r.diagnostics.map((d) => [d.code, d.severity]),
    [["GPU000", "information"]],
  );
  assert.match(r.diagnostics[0].message, /its code is \d KB, over the 1 KB limit/);
  assert.deepEqual(fixAllManifest(text, "yaml", { maxFileSizeKB: 1 }), { text, applied: 0 });
});
