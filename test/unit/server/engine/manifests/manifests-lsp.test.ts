/** The built language server on manifests (GPU018-GPU020) over stdio: diagnostics, quick fixes, noqa actions, fix-all, hover. */
import assert from "node:assert/strict";
import { test, before } from "node:test";
import { pathToFileURL } from "node:url";
import {
  DidOpenTextDocumentNotification,
  DidChangeTextDocumentNotification,
  CodeActionRequest,
  HoverRequest,
  type ProtocolConnection,
  type Diagnostic,
} from "vscode-languageserver-protocol/node";
import { useLanguageServer } from "../../../support/lspHarness";
import { applyEdits } from "../../../../../server/src/engine/fixes";

const lsp = useLanguageServer();
const { published } = lsp;
const diagnosticsFor = lsp.diagnosticsFor;
let conn: ProtocolConnection;
before(async () => {
  await lsp.ready;
  conn = lsp.conn;
  assert.ok(lsp.init.capabilities.codeActionProvider);
});

type Edit = {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  newText: string;
};
type Action = { title: string; kind: string; isPreferred?: boolean; edit?: { changes: Record<string, Edit[]> } };

async function open(path: string, languageId: string, text: string): Promise<string> {
  const uri = pathToFileURL(path).href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId, version: 1, text },
  });
  return uri;
}

async function actionsFor(uri: string, d: Diagnostic): Promise<Action[]> {
  return (await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [d] },
  })) as Action[];
}

const DEPLOYMENT =
  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n        - name: train\n          image: pytorch/pytorch:latest\n          resources:\n            requests:\n              nvidia.com/gpu: 1\n";

test("a Deployment opened as yaml gets GPU018 with its safe fix, the noqa action and fix-all", async () => {
  const uri = await open("/tmp/gp manifests/k8s/deployment.yaml", "yaml", DEPLOYMENT);
  const [d] = await diagnosticsFor(uri, (ds) => ds.some((x) => x.code === "GPU018"));
  assert.equal(d.source, "gpu-pilot");
  assert.equal(d.severity, 1);
  assert.deepEqual(d.range, { start: { line: 12, character: 14 }, end: { line: 12, character: 31 } });
  assert.match(d.codeDescription!.href, /docs\/rules\/GPU018\.md$/);
  const list = await actionsFor(uri, d);
  const fix = list.find((a) => a.title === "Set limits nvidia.com/gpu: 1 (equal to the request)")!;
  assert.equal(fix.isPreferred, true);
  assert.equal(
    applyEdits(DEPLOYMENT, fix.edit!.changes[uri]),
    `${DEPLOYMENT}            limits:\n              nvidia.com/gpu: 1\n`,
  );
  const noqa = list.find((a) => a.title === "Disable GPU018 for this line")!;
  assert.deepEqual(noqa.edit!.changes[uri][0], {
    range: { start: { line: 12, character: 31 }, end: { line: 12, character: 31 } },
    newText: "  # noqa: GPU018",
  });
  assert.ok(list.some((a) => a.title === "Show documentation for GPU018"));
  const all = (await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [], only: ["source.fixAll.gpuPilot"] },
  })) as Action[];
  assert.equal(all.length, 1);
  assert.equal(
    all[0].edit!.changes[uri][0].newText,
    `${DEPLOYMENT}            limits:\n              nvidia.com/gpu: 1\n`,
  );
});

test("a Dockerfile gets GPU019; its noqa action writes a comment line above the instruction", async () => {
  const text = "FROM pytorch/pytorch:latest\nENV CUDA_VISIBLE_DEVICES=1\n";
  const uri = await open("/tmp/gp manifests/Dockerfile", "dockerfile", text);
  const [d] = await diagnosticsFor(uri, (ds) => ds.length > 0);
  assert.equal(d.code, "GPU019");
  assert.equal(d.severity, 2);
  const list = await actionsFor(uri, d);
  const remove = list.find((a) => a.title.startsWith("Remove CUDA_VISIBLE_DEVICES"))!;
  assert.equal(remove.isPreferred, false);
  assert.equal(applyEdits(text, remove.edit!.changes[uri]), "FROM pytorch/pytorch:latest\n");
  const noqa = list.find((a) => a.title === "Disable GPU019 for this instruction")!;
  assert.equal(
    applyEdits(text, noqa.edit!.changes[uri]),
    "FROM pytorch/pytorch:latest\n# noqa: GPU019\nENV CUDA_VISIBLE_DEVICES=1\n",
  );
});

test("a compose file (dockercompose) gets GPU020; hovering a code in a YAML noqa comment shows the rule", async () => {
  const text =
    "services:\n  a:\n    image: i\n    deploy:\n      resources:\n        reservations:\n          devices:\n            - driver: nvidia\n              count: 1\n    labels: {x: y}  # noqa: GPU020\n";
  const uri = await open("/tmp/gp manifests/stack.yml", "dockercompose", text);
  const [d] = await diagnosticsFor(uri, (ds) => ds.length > 0);
  assert.equal(d.code, "GPU020");
  assert.equal(d.range.start.line, 7);
  const hover = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 9, character: 30 },
  });
  const value = (hover!.contents as { value: string }).value;
  assert.match(value, /\*\*GPU020\*\* `compose-gpu-reservation`/);
  assert.match(value, /```yaml/);
  assert.deepEqual(hover!.range, { start: { line: 9, character: 28 }, end: { line: 9, character: 34 } });
});

test("a devcontainer.json (jsonc) gets GPU072 on its runArgs, with the safe fix; its // noqa hovers as the rule", async () => {
  const text = '{\n  "image": "img",\n  "runArgs": ["--gpus", "device=2,3"],\n  "mounts": [] // noqa: GPU072\n}\n';
  const uri = await open("/tmp/gp manifests/.devcontainer/devcontainer.json", "jsonc", text);
  const [d] = await diagnosticsFor(uri, (ds) => ds.length > 0);
  assert.equal(d.code, "GPU072");
  assert.deepEqual(d.range, { start: { line: 2, character: 24 }, end: { line: 2, character: 36 } });
  const fix = (await actionsFor(uri, d)).find((a) => a.title === "Quote the device list")!;
  assert.equal(applyEdits(text, fix.edit!.changes[uri]), text.replace('"device=2,3"', '"\\"device=2,3\\""'));
  const hover = await conn.sendRequest(HoverRequest.type, {
    textDocument: { uri },
    position: { line: 3, character: 27 },
  });
  assert.match((hover!.contents as { value: string }).value, /\*\*GPU072\*\* `docker-gpus-device-list-split`/);
});

test("other YAML and other languages get no manifest diagnostics", async () => {
  // The server lints in the order documents arrive: once values.yaml is published, notes.md was handled.
  const md = await open("/tmp/gp manifests/notes.md", "markdown", "ENV CUDA_VISIBLE_DEVICES=1\n");
  const uri = await open("/tmp/gp manifests/values.yaml", "yaml", "resources:\n  requests:\n    nvidia.com/gpu: 1\n");
  assert.deepEqual(await diagnosticsFor(uri, () => true), []);
  assert.equal(published.get(md), undefined);
});

test("editing one document of a YAML stream: the findings of every version are those of the same text opened afresh", async () => {
  // The server keeps the stream's parsed documents and parses again only those an edit touches
  // (manifests/yaml.ts parseYamlAfter); after each edit the findings must be what a new document
  // with that text gets: the moved documents' findings at their new lines, the edited one's new.
  const docs = Array.from({ length: 5 }, (_, k) => DEPLOYMENT.replace("name: train", `name: train-${k}`));
  let text = docs.join("---\n");
  const uri = await open("/tmp/gp manifests/k8s/stream.yaml", "yaml", text);
  await diagnosticsFor(uri, (ds) => ds.filter((x) => x.code === "GPU018").length === 5);
  // Lines into the second document: a limit that fixes it, a line that moves the rest, a quote that opens and closes.
  const edits = [
    { line: 25, character: 0, text: "            limits:\n              nvidia.com/gpu: 1\n" },
    { line: 16, character: 0, text: "# a comment that moves the documents after it\n" },
    { line: 16, character: 2, text: '"' },
    { line: 16, character: 3, text: '"' },
  ];
  for (const [k, e] of edits.entries()) {
    const lines = text.split("\n");
    lines[e.line] = lines[e.line].slice(0, e.character) + e.text + lines[e.line].slice(e.character);
    text = lines.join("\n");
    await conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: k + 2 },
      contentChanges: [
        {
          range: { start: { line: e.line, character: e.character }, end: { line: e.line, character: e.character } },
          text: e.text,
        },
      ],
    });
    await diagnosticsFor(uri, () => published.get(uri)!.some((p) => p.version === k + 2));
    const fresh = await open(`/tmp/gp manifests/k8s/stream-${k}.yaml`, "yaml", text);
    const expected = await diagnosticsFor(fresh, () => true);
    const strip = (ds: Diagnostic[]) =>
      JSON.stringify(ds.map((d) => ({ code: d.code, range: d.range, message: d.message })));
    assert.equal(
      strip(published.get(uri)!.find((p) => p.version === k + 2)!.diagnostics),
      strip(expected),
      `after edit ${k}`,
    );
  }
});
