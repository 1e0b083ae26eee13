// Control characters from the code under review never reach an output raw (issue 18, item 10): a
// value holding a newline must not start a `::warning::` / `::add-mask::` line in a GitHub Actions
// log, a raw ESC must not set the terminal title. Checked where messages are made (the engine's
// diagnostics, fix titles and related messages), in every CLI format (text, github, sarif, json),
// on stderr, and in the language server's published diagnostics.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DidOpenTextDocumentNotification } from "vscode-languageserver-protocol/node";
import { initEngine, lintPython } from "../../../../server/src/engine/lint";
import { lintManifest } from "../../../../server/src/engine/manifests/lintManifest";
import { escapeControls, hasControls } from "../../../../common/src/text/controls";
import { useLanguageServer } from "../../support/lspHarness";
import { runCli as cli } from "../../support/cliRun";

const ESC = "\x1b";
/** Starts with a letter: CUDA reads an entry's leading digits ("0<newline>..." would be a valid 0), so this value hides every GPU and GPU003 quotes it. */
const HOSTILE = `x0\n::warning::pwned\n::add-mask::x\r\n::stop-commands::tok${ESC}]0;TITLE\x07\x9b\u202e`;
/** Python source: a CUDA_VISIBLE_DEVICES value with the hostile characters written raw (legal in a string literal) and as escapes. */
const PY = [
  "import os",
  `os.environ["CUDA_VISIBLE_DEVICES"] = "${HOSTILE.replace(/\n/g, "\\n").replace(/\r/g, "\\r")}"`,
  `os.environ["CUDA_VISIBLE_DEVICE${ESC}]0;T\x07"] = "1"`,
  `os.environ["CUDA_LAUNCH_BLOKING${ESC}[2J"] = "1"`,
  "import torch",
  `torch.cuda.set_device("cuda:${ESC}]0;x\x07")`,
  "",
].join("\n");
const DOCKERFILE = `FROM python:3.12\nENV CUDA_VISIBLE_DEVICES="0${ESC}]0;T\x07\\n::warning::x"\n`;

/** Raw characters no output may carry: C0 (but the newlines the format itself writes), DEL, C1, separators, bidi. */
// eslint-disable-next-line no-control-regex -- the test looks for control characters
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

before(async () => {
  await initEngine();
});

test("escapeControls: visible escapes like Python's repr; plain text unchanged", () => {
  assert.equal(
    escapeControls("a\nb\r\tc\x1b]0;t\x07\x00\x7f\x9b\u2028\u202e"),
    "a\\nb\\r\\tc\\x1b]0;t\\x07\\x00\\x7f\\x9b\\u2028\\u202e",
  );
  assert.equal(escapeControls('plain "text" \\n é ✓ 😀'), 'plain "text" \\n é ✓ 😀');
  assert.equal(hasControls("x\x1by"), true);
  assert.equal(hasControls("xy"), false);
  assert.equal(hasControls("xy"), false, "no lastIndex state left behind");
});

test("engine: every message, related message and fix title of Python and manifest diagnostics is free of raw controls", () => {
  const py = lintPython(PY, { preview: true }).diagnostics;
  assert.ok(py.length >= 2, JSON.stringify(py.map((d) => d.code)));
  const dock = lintManifest(DOCKERFILE, "dockerfile").diagnostics;
  assert.ok(dock.length >= 1, "the Dockerfile gets a finding");
  for (const d of [...py, ...dock]) {
    for (const text of [d.message, d.fix?.title ?? "", ...(d.related ?? []).map((r) => r.message)]) {
      assert.ok(!RAW.test(text) && !text.includes("\n"), `${d.code}: ${JSON.stringify(text)}`);
    }
  }
  const gpu003 = py.find((d) => d.code === "GPU003");
  assert.ok(gpu003, JSON.stringify(py.map((d) => d.code)));
  assert.ok(
    gpu003.message.includes(
      "0\\n::warning::pwned\\n::add-mask::x\\r\\n::stop-commands::tok\\x1b]0;TITLE\\x07\\x9b\\u202e",
    ),
    gpu003.message,
  );
});

test("CLI: text, github, sarif and json carry no raw control characters, even from a file name with a newline and ESC", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gp-cc-"));
  const file = join(dir, `evil\n::error::named${ESC}]0;T\x07.py`);
  writeFileSync(file, PY);
  writeFileSync(join(dir, "Dockerfile"), DOCKERFILE);
  for (const format of ["text", "github", "sarif", "json"]) {
    const r = await cli(["check", "--preview", "--format", format, dir]);
    assert.equal(r.code, 1, `${format}: ${r.err}`);
    assert.ok(
      !RAW.test(r.out),
      `${format}: ${JSON.stringify(r.out.match(RAW))} in ${JSON.stringify(r.out.slice(0, 2000))}`,
    );
    assert.ok(!RAW.test(r.err), `${format} stderr: ${JSON.stringify(r.err)}`);
    const lines = r.out.split("\n").filter((l) => l !== "");
    if (format === "github") {
      for (const l of lines) assert.match(l, /^::(error|warning|notice) title=gpu-pilot \(GPU0\d\d\),file=/, l);
      assert.equal(lines.length, 3, r.out);
    } else {
      for (const l of lines)
        assert.ok(!/^\s*::/.test(l), `${format}: a line starts a workflow command: ${JSON.stringify(l)}`);
    }
    if (format === "text") {
      assert.ok(r.out.includes("evil\\n::error::named\\x1b]0;T\\x07.py:2:"), r.out);
      assert.ok(r.out.includes("\\n::warning::pwned"), r.out);
    }
    if (format === "json" || format === "sarif") {
      const parsed = JSON.parse(r.out) as unknown;
      const text = JSON.stringify(parsed);
      if (format === "json") {
        // JSON keeps the real file name (JSON escaping is enough for data); messages are escaped text.
        const all = parsed as Array<{ filename: string; message: string }>;
        assert.ok(
          all.some((d) => d.filename === file),
          text.slice(0, 500),
        );
        for (const d of all) assert.ok(!RAW.test(d.message) && !d.message.includes("\n"), d.message);
      } else {
        assert.ok(text.includes("\\\\n::warning::pwned"), "the SARIF message shows the escape");
      }
    }
  }
});

const lsp = useLanguageServer();

test("language server: published diagnostics carry no raw control characters", async () => {
  await lsp.ready;
  const uri = pathToFileURL(join(mkdtempSync(join(tmpdir(), "gp-cc-lsp-")), "evil.py")).href;
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: PY },
  });
  const diags = await lsp.diagnosticsFor(uri, (d) => d.some((x) => x.code === "GPU003"));
  for (const d of diags) {
    const message = typeof d.message === "string" ? d.message : d.message.value;
    assert.ok(!RAW.test(message) && !message.includes("\n"), `${String(d.code)}: ${JSON.stringify(message)}`);
    for (const r of d.relatedInformation ?? []) assert.ok(!RAW.test(r.message) && !r.message.includes("\n"), r.message);
  }
});
