/**
 * The CLI resolves the folder's part of the options once per folder (options.ts optionsResolver):
 * the result for every file equals resolveLintOptions's, per-file ignores included, and a folder's
 * pyproject.toml and torch pin are looked up once however many files it holds.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdirSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { optionsResolver, resolveLintOptions } from "../../../../server/src/engine/options";

test("optionsResolver gives resolveLintOptions's options for each file, per-file ignores included", () => {
  const root = mkdtempSync(join(tmpdir(), "gp-resolver-"));
  mkdirSync(join(root, ".git"));
  writeFileSync(
    join(root, "pyproject.toml"),
    '[tool.gpu-pilot]\nselect = ["GPU0"]\nignore = ["GPU002"]\n\n[tool.gpu-pilot.per-file-ignores]\n"tests/*" = ["GPU001"]\n',
  );
  mkdirSync(join(root, "tests"));
  mkdirSync(join(root, "old"));
  writeFileSync(join(root, "old", "requirements.txt"), "torch==2.1.0\n");
  const files = ["a.py", "b.py", "tests/t1.py", "tests/t2.py", "old/x.py", "old/y.py"].map((f) => join(root, f));
  for (const f of files) writeFileSync(f, "import os\n");
  const resolve = optionsResolver({}, "filesystemFirst", { preview: true });
  for (const f of files)
    assert.deepEqual(resolve(f), resolveLintOptions(f, {}, "filesystemFirst", { preview: true }), f);
  assert.deepEqual(resolve(join(root, "tests", "t1.py")).options.ignore, ["GPU002", "GPU001"]);
  assert.equal(resolve(join(root, "a.py")).options.ignore?.includes("GPU001"), false);
  assert.equal(resolve(join(root, "old", "x.py")).options.torchBelow24, true, "the folder's own torch pin");
  assert.equal(resolve(join(root, "a.py")).options.torchBelow24, false);
  assert.deepEqual(resolve(null), resolveLintOptions(null, {}, "filesystemFirst", { preview: true }));
  // Folder facts are kept for the run: a requirements file added later to a folder already seen
  // is not read again (resolveLintOptions, used by the server, reads it at once).
  writeFileSync(join(root, "requirements.txt"), "torch==2.0\n");
  assert.equal(resolve(join(root, "b.py")).options.torchBelow24, false);
  assert.equal(resolveLintOptions(join(root, "b.py"), {}, "filesystemFirst").options.torchBelow24, true);
  rmSync(root, { recursive: true, force: true });
});

test("baselineOf: the baseline the folder's pyproject.toml names, as resolve(file).baseline, also in a folder resolved only for it", () => {
  const root = mkdtempSync(join(tmpdir(), "gp-resolver-baseline-"));
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, "pyproject.toml"), '[tool.gpu-pilot]\nbaseline = "gpu-pilot-baseline.json"\n');
  mkdirSync(join(root, "sub"));
  writeFileSync(join(root, "sub", "pyproject.toml"), "[tool.gpu-pilot]\n");
  const files = ["a.py", "sub/b.py"].map((f) => join(root, f));
  for (const f of files) writeFileSync(f, "import os\n");
  const resolve = optionsResolver({}, "filesystemFirst");
  // Asked first, before any resolve() of the folder; then equal to the full resolution's.
  assert.equal(resolve.baselineOf(files[0]), join(root, "gpu-pilot-baseline.json"));
  assert.equal(resolve.baselineOf(files[1]), null, "the nearest pyproject names none");
  for (const f of files) assert.equal(resolve.baselineOf(f), resolve(f).baseline, f);
  rmSync(root, { recursive: true, force: true });
});

test("resolveLintOptions: a Python file's launchNodes (its job and shell scripts' launches; documents are read lazily) and testModule, as the CLI's resolver gives them", async () => {
  const { isTestModule } = await import("../../../../server/src/engine/options");
  const root = mkdtempSync(join(tmpdir(), "gp-resolver-nodes-"));
  mkdirSync(join(root, ".git"));
  mkdirSync(join(root, "tests"));
  writeFileSync(join(root, "serve.py"), "import os\n");
  writeFileSync(join(root, "tests", "helper.py"), "import os\n");
  writeFileSync(join(root, "two.sh"), "torchrun --nnodes=2 --nproc_per_node=8 serve.py\n");
  writeFileSync(join(root, "README.md"), "```bash\ntorchrun --standalone serve.py\n```\n");
  try {
    const got = resolveLintOptions(join(root, "serve.py"), {}, "filesystemFirst").options;
    assert.deepEqual(got.launchNodes, [
      { script: join(root, "two.sh"), line: 0, nodes: "several", from: "--nnodes=2", documented: false, args: [] },
    ]);
    assert.equal(got.testModule, undefined);
    assert.deepEqual(optionsResolver({}, "filesystemFirst")(join(root, "serve.py")).options, got);
    assert.equal(resolveLintOptions(join(root, "tests", "helper.py"), {}, "filesystemFirst").options.testModule, true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  for (const f of [
    "/p/test_x.py",
    "/p/x_test.py",
    "/p/conftest.py",
    "/p/tests/a.py",
    "C:\\p\\testing\\b.py",
    "/p/test/c.py",
  ])
    assert.equal(isTestModule(f), true, f);
  for (const f of ["/p/testx.py", "/p/latest.py", "/p/contest.py", "/p/tests_data.py", "/p/mytests/a.py"])
    assert.equal(isTestModule(f), false, f);
});

test("the options carry the folder's vLLM and DeepSpeed pins (libraryPins, for GPU056 and GPU040) and the init catalogue's packages' pins (GPU001's and GPU002's entries), no other library's", () => {
  const root = mkdtempSync(join(tmpdir(), "gp-pins-"));
  mkdirSync(join(root, ".git"));
  mkdirSync(join(root, "serve"));
  writeFileSync(join(root, "serve", "requirements.txt"), "vllm==0.8.4\ntransformers>=4.40\nnumpy==1.26.4\n");
  writeFileSync(join(root, "pyproject.toml"), '[project]\nname = "x"\ndependencies = ["vllm>=0.10"]\n');
  for (const f of ["serve/a.py", "b.py"]) writeFileSync(join(root, f), "import vllm\n");
  const resolve = optionsResolver({}, "filesystemFirst");
  assert.deepEqual(
    resolve(join(root, "serve", "a.py")).options.libraryPins,
    { vllm: "==0.8.4", transformers: ">=4.40" },
    "the folder's own pin first; transformers is catalogued, numpy is not",
  );
  assert.deepEqual(resolve(join(root, "b.py")).options.libraryPins, { vllm: ">=0.10" }, "the pyproject's dependencies");
  assert.deepEqual(resolveLintOptions(join(root, "serve", "a.py"), {}, "filesystemFirst").options.libraryPins, {
    vllm: "==0.8.4",
    transformers: ">=4.40",
  });
  writeFileSync(join(root, "pyproject.toml"), '[project]\nname = "x"\n');
  assert.equal(
    resolveLintOptions(join(root, "b.py"), {}, "filesystemFirst").options.libraryPins,
    undefined,
    "unpinned: absent",
  );
  // GPU040 reads the deepspeed pin (its --include check against a hostfile changed in 0.15.2), also for a shell script.
  writeFileSync(join(root, "requirements.txt"), "deepspeed==0.9.2\ntorch>=2\n");
  writeFileSync(join(root, "run.sh"), "deepspeed --hostfile hostfile train.py\n");
  assert.deepEqual(resolveLintOptions(join(root, "run.sh"), {}, "filesystemFirst").options.libraryPins, {
    deepspeed: "==0.9.2",
    torch: ">=2",
  });
  rmSync(root, { recursive: true, force: true });
});
