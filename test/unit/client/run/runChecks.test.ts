// The run checks on the rule cases (test/cases): the engine finds LOCAL_RANK reads, env://
// init_process_group and CUDA_VISIBLE_DEVICES writes with GPU001's verdict on each
// (server/src/engine/runFacts.ts, what the language server answers to gpuPilot/runFacts);
// checks.ts turns them into findings. The CodeLens's __main__ line scan is client/src/run/mainGuard.ts.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MAIN_GUARD_MAX_CHARS, mainGuardLine } from "../../../../client/src/run/mainGuard";
import { initEngine } from "../../../../server/src/engine/lint";
import { runFacts } from "../../../../server/src/engine/runFacts";
import { checkRun, type RunFinding } from "../../../../client/src/run/checks";
import type { Inventory } from "../../../../common/src/gpu/nvidiaSmi";
import { type ProcessOwner, processOwner } from "../../../../client/src/run/owners";
import { ROOT } from "../../support/root";

const CASES = join(ROOT, "test", "cases");
before(() => initEngine());
const UUID0 = "GPU-ddb4766f-9df2-8ec7-7d7f-a3a61570219f";
const UUID1 = "GPU-6486822f-842c-1320-f829-e4155c0d2130";

/** A rule case (test/cases/<name>): its path and text. */
function ruleCase(name: string): { file: string; text: string } {
  const file = join(CASES, name);
  assert.ok(existsSync(file), `missing rule case ${file}`);
  return { file, text: readFileSync(file, "utf8") };
}

const gpu = (index: number, uuid: string) =>
  ({ index, uuid, name: "NVIDIA H200", pciBusId: `00000000:00:0${6 + index}.0` }) as Inventory["gpus"][number];
const inventory = (apps: Inventory["apps"] = []): Inventory => ({
  gpus: [gpu(0, UUID0), gpu(1, UUID1)],
  apps,
  problems: [],
  takenAt: 0,
});
const kinds = (f: RunFinding[]) => f.map((x) => x.kind);

async function findings(
  name: string,
  launcher: Parameters<typeof checkRun>[0]["launcher"],
  ids = ["0", "1"],
  extra: Partial<Parameters<typeof checkRun>[0]> = {},
) {
  const { file, text } = ruleCase(name);
  return checkRun({ launcher, file, ids, nproc: 0, analysis: runFacts(text), inventory: inventory(), ...extra });
}

test("ddp_ok.py reads LOCAL_RANK: plain python gets the torchrun suggestion, torchrun does not", async () => {
  const a = runFacts(ruleCase("ddp_ok.py").text);
  assert.deepEqual(a.distributedReads, [
    { variable: "LOCAL_RANK", line: 6, withDefault: false, text: 'os.environ["LOCAL_RANK"]' },
  ]);
  assert.deepEqual(
    a.envInitProcessGroup.map((c) => c.line),
    [8],
  );
  assert.deepEqual(a.visibleDevicesWrites, []);

  const py = await findings("ddp_ok.py", "python");
  assert.deepEqual(kinds(py), ["needsDistributedLauncher"]);
  assert.equal(
    py[0].message,
    'ddp_ok.py reads LOCAL_RANK (line 7: os.environ["LOCAL_RANK"]), which only a distributed launcher such as torchrun sets: ' +
      "under plain python it raises KeyError. Run it with torchrun (--nproc_per_node=2, one process per selected GPU)?",
  );
  for (const launcher of ["torchrun", "accelerate", "deepspeed"] as const)
    assert.deepEqual(await findings("ddp_ok.py", launcher), [], launcher);
});

test("ddp_no_set_device.py calls init_process_group from the environment: torchrun suggested too", async () => {
  const py = await findings("ddp_no_set_device.py", "python", ["1"]);
  assert.deepEqual(kinds(py), ["needsDistributedLauncher"]);
  assert.match(
    py[0].message,
    /calls init_process_group with rank and world size from the environment \(line 7: dist\.init_process_group\(backend="nccl"\)\).*--nproc_per_node=1/,
  );
});

test("reads with a default and explicit init_process_group arguments", async () => {
  const soft = runFacts('import os\nrank = int(os.environ.get("RANK", "0"))\nws = os.getenv("WORLD_SIZE")\n');
  assert.deepEqual(
    soft.distributedReads.map((r) => [r.variable, r.line, r.withDefault]),
    [
      ["RANK", 1, true],
      ["WORLD_SIZE", 2, false],
    ],
  );
  const onlyDefault = runFacts('import os\nrank = int(os.environ.get("LOCAL_RANK", 0))\n');
  const f = checkRun({ launcher: "python", file: "/p/t.py", ids: ["0"], nproc: 0, analysis: onlyDefault });
  assert.match(f[0].message, /gets its default and runs as one process/);
  const explicit = runFacts(
    'import torch.distributed as dist\ndist.init_process_group("gloo", rank=0, world_size=1, init_method="tcp://127.0.0.1:1")\n',
  );
  assert.deepEqual(explicit.envInitProcessGroup, []);
  // A string that merely mentions LOCAL_RANK is no read (no regex over the source).
  const text = runFacts('print("set LOCAL_RANK = os.environ[\'LOCAL_RANK\']")\n# os.environ["LOCAL_RANK"]\n');
  assert.deepEqual(text.distributedReads, []);
});

test("the script's own CUDA_VISIBLE_DEVICES write: both values shown", async () => {
  // env_after_is_available.py writes "3" after torch.cuda.is_available(): GPU001's verdict, no effect, nothing replaced.
  const late = runFacts(ruleCase("env_after_is_available.py").text);
  assert.deepEqual(late.visibleDevicesWrites, [
    {
      line: 5,
      value: "3",
      text: 'os.environ["CUDA_VISIBLE_DEVICES"] = "3"',
      noEffect:
        "CUDA_VISIBLE_DEVICES is set after CUDA was initialised by torch.cuda.is_available() (line 5): it has no effect in this process (the program stays on the GPUs it already saw)",
    },
  ]);
  assert.deepEqual(kinds(await findings("env_after_is_available.py", "python")), []);
  const c16py = await findings("renumbering_ok.py", "python");
  assert.deepEqual(kinds(c16py), ["overridesSelection"]);
  assert.equal(
    c16py[0].message,
    'renumbering_ok.py sets CUDA_VISIBLE_DEVICES itself to "3" (line 4), which replaces the selection "0,1" that GPU Pilot passes. Run it anyway?',
  );
  const c03 = await findings("env_before_import_ok.py", "torchrun", ["1"]);
  assert.match(c03[0].message, /to "0,1" \(line 5\), which replaces the selection "1"/);
  const c16 = await findings("renumbering_ok.py", "deepspeed", ["0"]);
  assert.match(c16[0].message, /to "3" \(line 4\)/);
  const c02 = await findings("env_after_import_only.py", "docker", ["1"]);
  assert.deepEqual(kinds(c02), ["overridesSelection"]);
  assert.deepEqual(
    kinds(await findings("env_after_import_only.py", "docker", ["0"])),
    [],
    'its "0" is the selection "0": nothing replaced',
  );
  const slurm = await findings("env_after_import_only.py", "slurm", []);
  assert.match(slurm[0].message, /replaces the GPUs Slurm allocates/);
  // putenv counts (it changes the C environment CUDA reads); setdefault does not (it keeps our value).
  assert.deepEqual(kinds(await findings("putenv.py", "python")), ["overridesSelection"]);
  const setdefault = runFacts('import os\nos.environ.setdefault("CUDA_VISIBLE_DEVICES", "1")\n');
  assert.deepEqual(setdefault.visibleDevicesWrites, []);
  const computed = runFacts('import os, sys\nos.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[1]\n');
  const f = checkRun({ launcher: "python", file: "/p/t.py", ids: ["0"], nproc: 0, analysis: computed });
  assert.match(
    f[0].message,
    /to a computed value \(os\.environ\["CUDA_VISIBLE_DEVICES"\] = sys\.argv\[1\]\) \(line 2\)/,
  );
});

test("cases that leave CUDA_VISIBLE_DEVICES alone give no finding", async () => {
  for (const name of ["misspelled.py", "tf_ok.py", "jax_ok.py", "dataparallel_ids.py", "thread_set_device.py"]) {
    assert.deepEqual(await findings(name, "python"), [], name);
  }
});

test("unknown ids, too many processes, busy GPUs (warn only: other users' processes)", async () => {
  const unknown = checkRun({ launcher: "python", file: "/p/t.py", ids: ["1", "3"], nproc: 0, inventory: inventory() });
  assert.deepEqual(unknown, [
    {
      kind: "unknownIds",
      message: "The selection names 3, which nvidia-smi does not list (GPUs here: 0, 1).",
      ids: ["3"],
      available: ["0", "1"],
    },
  ]);
  assert.deepEqual(
    checkRun({ launcher: "slurm", file: "/p/t.py", ids: ["3"], nproc: 0, inventory: inventory() }),
    [],
    "srun: ids of this machine do not matter",
  );

  const many = checkRun({ launcher: "torchrun", file: "/p/t.py", ids: ["0", "1"], nproc: 4, inventory: inventory() });
  assert.equal(many[0].kind, "tooManyProcesses");
  assert.equal(
    many[0].message,
    'gpuPilot.run.nproc asks for 4 processes on 2 selected GPUs: ranks 2 to 3 would have no GPU of their own (torch.cuda.set_device(LOCAL_RANK) fails with "invalid device ordinal").',
  );
  assert.deepEqual(
    checkRun({ launcher: "torchrun", file: "/p/t.py", ids: ["0", "1"], nproc: 2, inventory: inventory() }),
    [],
  );
  assert.deepEqual(checkRun({ launcher: "python", file: "/p/t.py", ids: ["0"], nproc: 4 }), [], "python ignores nproc");

  const apps: Inventory["apps"] = [
    { gpuUuid: UUID0, gpuBusId: null, pid: 582, processName: "python3", usedMemoryMiB: 3380 },
    { gpuUuid: UUID0, gpuBusId: null, pid: 600, processName: "mine", usedMemoryMiB: 10 },
    { gpuUuid: UUID1, gpuBusId: null, pid: 700, processName: "/usr/bin/python", usedMemoryMiB: null },
  ];
  const ownerOf = (pid: number): ProcessOwner => (pid === 600 ? "me" : pid === 582 ? "other" : "unknown");
  const busy = checkRun({
    launcher: "python",
    file: "/p/t.py",
    ids: ["0", "1"],
    nproc: 0,
    inventory: inventory(apps),
    ownerOf,
  });
  assert.deepEqual(kinds(busy), ["busy"]);
  assert.equal(
    busy[0].message,
    "GPU 0 runs 1 process of another user (pid 582 python3, 3.3 GiB); GPU 1 runs 1 process of another user or container (pid 700 /usr/bin/python). " +
      "The run shares them: memory and speed may suffer.",
  );
  assert.deepEqual(
    checkRun({ launcher: "python", file: "/p/t.py", ids: [UUID1], nproc: 0, inventory: inventory(apps), ownerOf }).map(
      (f) => f.kind,
    ),
    ["busy"],
    "by UUID",
  );
  assert.deepEqual(
    checkRun({
      launcher: "python",
      file: "/p/t.py",
      ids: ["0"],
      nproc: 0,
      inventory: inventory(apps),
      ownerOf: () => "me",
    }),
    [],
    "own processes are fine",
  );
});

test("the __main__ guard is found in the tree, at module level only", async () => {
  assert.equal(
    await mainGuardLine('import os\n\ndef main():\n    pass\n\nif __name__ == "__main__":\n    main()\n'),
    5,
  );
  assert.equal(await mainGuardLine("if '__main__' == __name__:\n    pass\n"), 0);
  assert.equal(await mainGuardLine('def f():\n    if __name__ == "__main__":\n        pass\n'), undefined);
  assert.equal(await mainGuardLine('s = """\nif __name__ == "__main__":\n"""\n'), undefined, "inside a string");
  assert.equal(await mainGuardLine('if __name__ != "__main__":\n    pass\n'), undefined);
  assert.equal(await mainGuardLine(ruleCase("ddp_ok.py").text), undefined);
  // A line scan, no parse (issue 18 item 4): logical lines at column 0 only, with the file's strings,
  // brackets and continuations skipped, and nothing over the size cap.
  assert.equal(
    await mainGuardLine("x = (1,\nif __name__ == '__main__':\n  2)\nif (__name__ == '__main__'):  # run\n    pass\n"),
    3,
    "inside brackets: not a line start",
  );
  assert.equal(await mainGuardLine("x = 1 + \\\nif __name__ == '__main__' else 2\n"), undefined, "a continued line");
  assert.equal(await mainGuardLine('if __name__ == "__main__":\r\n    pass\r\n'), 0, "CRLF");
  assert.equal(await mainGuardLine("if __name__ == '__main__': main()\n"), 0);
  const big = "x = 1\n".repeat(MAIN_GUARD_MAX_CHARS / 6) + 'if __name__ == "__main__":\n    pass\n';
  assert.equal(await mainGuardLine(big), undefined, "over the cap: no lens");
  const k = Math.floor((MAIN_GUARD_MAX_CHARS - 36) / 6);
  const atCap = "x = 1\n".repeat(k) + 'if __name__ == "__main__":\n    pass\n';
  assert.ok(atCap.length <= MAIN_GUARD_MAX_CHARS);
  assert.equal(await mainGuardLine(atCap), k, "under the cap: found");
});

test(
  "processOwner: this process is mine; a pid that is not there is unknown",
  { skip: process.platform !== "linux" },
  () => {
    assert.equal(processOwner(process.pid), "me");
    assert.equal(processOwner(99_999_999), "unknown");
    assert.equal(processOwner(-1), "unknown");
  },
);

test("a write of the very value GPU Pilot passes replaces nothing; finetune_wrong_gpu.py's write has no effect (GPU001) whatever is selected", async () => {
  const text = readFileSync(join(ROOT, "examples", "finetune_wrong_gpu.py"), "utf8");
  const analysis = runFacts(text);
  assert.deepEqual(
    analysis.visibleDevicesWrites.map((w) => [w.line, w.value, w.noEffect !== null]),
    [[14, "1", true]],
  );
  assert.match(
    analysis.visibleDevicesWrites[0].noEffect!,
    /^CUDA_VISIBLE_DEVICES is set after CUDA was initialised by torch\.cuda\.is_available\(\) \(line 12\): it has no effect/,
  );
  const run = (a: typeof analysis, ids: string[]) =>
    checkRun({ launcher: "python", file: "/w/a.py", ids, nproc: 0, analysis: a, inventory: inventory() });
  assert.deepEqual(kinds(run(analysis, ["1"])), [], 'the file\'s "1" equals the selection "1"');
  assert.deepEqual(kinds(run(analysis, ["0"])), [], "no effect: it replaces nothing");
  // Before CUDA initialises the same write does take effect: an equal value replaces nothing, another does.
  const early = runFacts(
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nimport torch\ntorch.cuda.is_available()\n',
  );
  assert.deepEqual(
    early.visibleDevicesWrites.map((w) => [w.line, w.value, w.noEffect]),
    [[1, "1", null]],
  );
  assert.deepEqual(kinds(run(early, ["1"])), []);
  assert.deepEqual(kinds(run(early, ["0"])), ["overridesSelection"]);
  assert.match(run(early, ["0"])[0].message, /to "1" \(line 2\), which replaces the selection "0"/);
  const spaced = runFacts('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0, 1"\n');
  assert.deepEqual(
    kinds(
      checkRun({
        launcher: "python",
        file: "/w/a.py",
        ids: ["0", "1"],
        nproc: 0,
        analysis: spaced,
        inventory: inventory(),
      }),
    ),
    [],
    "spaces around entries are ignored, as CUDA does",
  );
});

test("several writes: only those that take effect count, in messages and in `writes`", async () => {
  const a = runFacts(
    'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "2"\nimport torch\ntorch.cuda.is_available()\nos.environ["CUDA_VISIBLE_DEVICES"] = "3"\n',
  );
  assert.deepEqual(
    a.visibleDevicesWrites.map((w) => [w.line, w.value, w.noEffect === null]),
    [
      [1, "2", true],
      [4, "3", false],
    ],
  );
  const f = checkRun({ launcher: "python", file: "/w/a.py", ids: ["0"], nproc: 0, analysis: a });
  assert.deepEqual(kinds(f), ["overridesSelection"]);
  assert.equal(
    f[0].message,
    'a.py sets CUDA_VISIBLE_DEVICES itself to "2" (line 2), which replaces the selection "0" that GPU Pilot passes. Run it anyway?',
  );
  assert.deepEqual(f[0].kind === "overridesSelection" && f[0].writes.map((w) => w.line), [1]);
});
