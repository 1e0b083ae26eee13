// The baseline in the editor (issue 43 item 3): when the document's pyproject.toml names a baseline
// (written here by the CLI), the findings it holds are published as hints with " (baselined)";
// a new finding, and every finding of a project without a baseline, keep their severity.
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  DiagnosticSeverity,
  DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification,
  type Diagnostic,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../support/lspHarness";
import { ROOT } from "../support/helpers";

const lsp = useLanguageServer();
before(() => lsp.ready);

/** GPU001 on line 5 (0-based 4): set after CUDA initialised. */
const LATE =
  'import os\nimport torch\n\nuse_gpu = torch.cuda.is_available()\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\n';

function project(pyproject: string | null): string {
  const dir = mkdtempSync(join(tmpdir(), "gp-lsp-baseline-"));
  mkdirSync(join(dir, ".git"));
  if (pyproject !== null) writeFileSync(join(dir, "pyproject.toml"), pyproject);
  writeFileSync(join(dir, "a.py"), LATE);
  return dir;
}

const gpu001 = (ds: Diagnostic[]) => ds.filter((d) => d.code === "GPU001");
/** A diagnostic's message as text (the server sends strings). */
const text = (d: Diagnostic | undefined): string => (typeof d?.message === "string" ? d.message : "");

test("a baselined finding is a hint with ' (baselined)'; edits elsewhere keep it so; a new finding keeps its severity", async () => {
  const dir = project('[tool.gpu-pilot]\nbaseline = "gp-baseline.json"\n');
  const w = spawnSync(
    process.execPath,
    [join(ROOT, "dist", "cli.js"), "check", "--no-cache", "--write-baseline", "gp-baseline.json", "a.py"],
    { cwd: dir, encoding: "utf8" },
  );
  assert.equal(w.status, 0, w.stdout + w.stderr);
  const uri = pathToFileURL(join(dir, "a.py")).href;
  await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "python", version: 1, text: LATE },
  });
  const first = gpu001(await lsp.diagnosticsFor(uri, (d) => gpu001(d).length === 1));
  assert.equal(first[0].severity, DiagnosticSeverity.Hint);
  assert.match(text(first[0]), /^CUDA_VISIBLE_DEVICES is set after CUDA was initialised .* \(baselined\)$/);
  // Two lines added above, and a second write of the variable (a new finding, line 8).
  const edited = `# header\n\n${LATE}os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n`;
  await lsp.conn.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [{ text: edited }],
  });
  const second = gpu001(await lsp.diagnosticsFor(uri, (d) => gpu001(d).length === 2));
  const byLine = new Map(second.map((d) => [d.range.start.line, d]));
  assert.equal(byLine.get(6)?.severity, DiagnosticSeverity.Hint, JSON.stringify(second));
  assert.ok(text(byLine.get(6)).endsWith(" (baselined)"));
  assert.equal(byLine.get(7)?.severity, DiagnosticSeverity.Error, JSON.stringify(second));
  assert.match(
    text(byLine.get(7)),
    /^CUDA_VISIBLE_DEVICES is set after CUDA was initialised by torch\.cuda\.is_available\(\) \(line 6\)/,
  );
  assert.ok(!text(byLine.get(7)).includes("(baselined)"));
});

test("no baseline named, or a broken one: findings keep their severity and message", async () => {
  for (const [name, pyproject, file] of [
    ["none", null, null],
    ["broken", '[tool.gpu-pilot]\nbaseline = "b.json"\n', "{"],
  ] as const) {
    const dir = project(pyproject);
    if (file !== null) writeFileSync(join(dir, "b.json"), file);
    const uri = pathToFileURL(join(dir, "a.py")).href;
    await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "python", version: 1, text: LATE },
    });
    const [d] = gpu001(await lsp.diagnosticsFor(uri, (ds) => gpu001(ds).length === 1));
    assert.equal(d.severity, DiagnosticSeverity.Error, name);
    assert.match(text(d), /^CUDA_VISIBLE_DEVICES is set after/, name);
    assert.ok(!text(d).includes("(baselined)"), name);
  }
});
