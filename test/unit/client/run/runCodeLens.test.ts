// The "Run on GPU <ids>" CodeLens above `if __name__ == "__main__":` (client/src/run/codeLens.ts),
// with the stand-in `vscode` module (client-fakeVscode.ts, imported first).
import { changeSettings, FakeDocument, languages, settings, Uri, workspace } from "../../support/client-fakeVscode";
import { test } from "node:test";
import assert from "node:assert/strict";
import { SelectionStore } from "../../../../common/src/gpu/selection";
import { lensTitle, registerRunCodeLens, type RunCodeLensProvider } from "../../../../client/src/run/codeLens";

const MAIN =
  'import torch\n\n\ndef main():\n    print(torch.cuda.device_count())\n\n\nif __name__ == "__main__":\n    main()\n';

function store() {
  const data = new Map<string, unknown>();
  return new SelectionStore({
    get: <T>(k: string) => data.get(k) as T | undefined,
    update: (k: string, v: unknown) => (data.set(k, v), Promise.resolve()),
  });
}

function doc(text: string): FakeDocument {
  const d = new FakeDocument(Uri.file("/work/proj/train.py"));
  d.text = text;
  return d;
}

type Lens = { range: { start: { line: number } }; command?: { title: string; command: string; arguments?: unknown[] } };

test("lensTitle", () => {
  assert.equal(lensTitle(["0", "1"], "python"), "Run on GPU 0,1");
  assert.equal(lensTitle(["1"], "torchrun"), "Run on GPU 1 with torchrun");
  assert.equal(lensTitle([], "python"), "Run on GPUs...");
});

test("one lens on the __main__ line, following the selection, the setting and workspace trust", async () => {
  settings.clear();
  workspace.isTrusted = true;
  const selection = store();
  await selection.set(["0", "1"]);
  const disposables = registerRunCodeLens(selection);
  const entry = languages.codeLensProviders.at(-1)!;
  assert.deepEqual(entry.selector, [
    { language: "python", scheme: "file" },
    { language: "python", scheme: "untitled" },
  ]);
  const provider = entry.provider as unknown as RunCodeLensProvider;
  let changes = 0;
  provider.onDidChangeCodeLenses(() => changes++);

  const d = doc(MAIN);
  let lenses = (await provider.provideCodeLenses(d as never)) as unknown as Lens[];
  assert.equal(lenses.length, 1);
  assert.equal(lenses[0].range.start.line, 7);
  assert.equal(lenses[0].command?.title, "Run on GPU 0,1");
  assert.equal(lenses[0].command?.command, "gpuPilot.runActiveFile");
  assert.deepEqual(lenses[0].command?.arguments, [d.uri]);

  await selection.set(["1"]);
  assert.equal(changes, 1, "a selection change refreshes the lenses");
  lenses = (await provider.provideCodeLenses(d as never)) as unknown as Lens[];
  assert.equal(lenses[0].command?.title, "Run on GPU 1");

  settings.set("run.launcher", "deepspeed");
  changeSettings(["gpuPilot.run.launcher"]);
  assert.equal(changes, 2);
  lenses = (await provider.provideCodeLenses(d as never)) as unknown as Lens[];
  assert.equal(lenses[0].command?.title, "Run on GPU 1 with deepspeed");

  settings.set("run.codeLens", false);
  changeSettings(["gpuPilot.run.codeLens"]);
  assert.equal(changes, 3);
  assert.deepEqual(await provider.provideCodeLenses(d as never), []);
  settings.delete("run.codeLens");

  workspace.isTrusted = false;
  assert.deepEqual(await provider.provideCodeLenses(d as never), [], "no lens in Restricted Mode");
  workspace.isTrusted = true;

  assert.deepEqual(await provider.provideCodeLenses(doc("print('no guard')\n") as never), []);
  assert.deepEqual(
    await provider.provideCodeLenses(doc('def f(:\n  if __name__ == "__main__":\n') as never),
    [],
    "broken code: no module-level guard",
  );

  for (const x of disposables) x.dispose();
  assert.equal(languages.codeLensProviders.includes(entry), false, "disposing unregisters the provider");
  await selection.set(["0"]);
  assert.equal(changes, 3, "no refresh after dispose");
});
