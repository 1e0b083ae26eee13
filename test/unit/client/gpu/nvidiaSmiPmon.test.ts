// nvidia-smi pmon (client/src/gpu/pmon.ts) on the real H100 captures of
// test/fixtures/nvidia-smi/h100-pmon (driver 580.159.04: a matmul loop, pid 698, and an idle
// process holding memory, pid 719), other drivers' shapes and broken output; what one run comes to
// (pmonSnapshot); the SM cell of the Processes tab (processTable.ts smFields) and its sort.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  parsePmon,
  PMON_ARGS,
  PMON_INTERVAL_MS,
  PMON_MAX_GPUS,
  pmonCalls,
  pmonSnapshot,
  PmonReader,
  PROCESS_SM_OFF,
  processKey,
  type ProcessSmSnapshot,
  smByProcess,
} from "../../../../client/src/gpu/pmon";
import {
  type DashboardProcess,
  NO_VALUE,
  SM_NO_SAMPLE,
  SM_NOT_READ,
  SM_NOTE,
  smFields,
  sortProcesses,
} from "../../../../client/src/gpu/processTable";
import { ROOT } from "../../support/root";

const DIR = join(ROOT, "test", "fixtures", "nvidia-smi", "h100-pmon");
const capture = (name: string) => readFileSync(join(DIR, name), "utf8");

test("PMON_ARGS and the interval: one sample of -s u every 15 s, so that the whole GPU side measured on the H100 with the Processes tab open stays under 600 ms of CPU a minute (at 10 s it was 636)", () => {
  assert.deepEqual(PMON_ARGS, ["pmon", "-c", "1", "-s", "u"]);
  assert.equal(PMON_INTERVAL_MS, 15_000);
  const measured = JSON.parse(capture("smi-pmon.json")) as { one_shot: { u: { cpu_ms_median: number } } };
  assert.equal(Math.round((60_000 / PMON_INTERVAL_MS) * measured.one_shot.u.cpu_ms_median), 123);
  // Every nvidia-smi the view runs, measured at once (verify/gpm/dmon_period.py), pmon every 10 s there.
  const all = JSON.parse(
    readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h100-gpm", "dmon-period.json"), "utf8"),
  ) as { modes: Record<string, { cpu_ms_per_minute: number; calls?: number }> };
  const m = all.modes;
  const streams =
    m["gpu-lms1000"].cpu_ms_per_minute + m["apps-lms5000"].cpu_ms_per_minute + m["dmon-d1"].cpu_ms_per_minute;
  const perCall = m["pmon-c1-every-10s"].cpu_ms_per_minute / m["pmon-c1-every-10s"].calls!;
  assert.ok(streams + 6 * perCall > 600, "at 10 s: over the goal");
  assert.ok(streams + (60_000 / PMON_INTERVAL_MS) * perCall <= 600, "at the interval: within 600 ms a minute on 1 GPU");
});

test("one-shot -s u capture: pid 698 at 99 % SM, pid 719 no sample (-)", () => {
  const p = parsePmon(capture("pmon-c1-u-0.txt"));
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.columns, ["gpu", "pid", "type", "sm", "mem", "enc", "dec", "jpg", "ofa", "command"]);
  assert.deepEqual(
    p.rows.map((r) => [r.gpuIndex, r.pid, r.type, r.smPercent, r.memPercent, r.command, r.line]),
    [
      [0, 698, "C", 99, 9, "python3", 3],
      [0, 719, "C", null, null, "python3", 4],
    ],
  );
  const sm = smByProcess(p.rows);
  assert.equal(sm.get(processKey(0, 698)), 99);
  assert.equal(sm.get(processKey(0, 719)), null);
  assert.equal(sm.has(processKey(1, 698)), false, "joined by GPU index and pid");
});

test("-s um capture: the extra fb and ccpm columns are read by name, the same SM values", () => {
  const p = parsePmon(capture("pmon-c1-um-0.txt"));
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.columns.slice(-3), ["fb", "ccpm", "command"]);
  assert.deepEqual(
    p.rows.map((r) => [r.pid, r.smPercent, r.memPercent, r.command]),
    [
      [698, 99, 9, "python3"],
      [719, null, null, "python3"],
    ],
  );
});

test("the -d 5 stream capture: one header, 24 rows; a process keeps its last number, '-' never hides one", () => {
  const p = parsePmon(capture("pmon-stream-d5.txt"));
  assert.deepEqual(p.problems, []);
  assert.equal(p.rows.length, 24);
  assert.deepEqual([...new Set(p.rows.filter((r) => r.pid === 698).map((r) => r.smPercent))], [98]);
  assert.ok(p.rows.filter((r) => r.pid === 719).every((r) => r.smPercent === null));
  const sm = smByProcess([...p.rows, { ...p.rows[0], smPercent: null }]);
  assert.deepEqual(
    [...sm],
    [
      ["0:698", 98],
      ["0:719", null],
    ],
  );
});

test("other shapes: an older driver's columns, -o DT's date and time in front, names with spaces, C+G, idle GPUs, MIG-style extra columns", () => {
  const older = [
    "# gpu        pid  type    sm   mem   enc   dec   command",
    "# Idx          #   C/G     %     %     %     %   name",
    "    0      25384     C    37     5     -     -   nvidia-cuda-mps",
    "    1          -     -     -     -     -     -   -",
    "",
    "    2      11952   C+G     -     -     -     -   renderD128 --cr",
    "    3      11953     G     4     -     -     -",
  ].join("\n");
  const p = parsePmon(older);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(
    p.rows.map((r) => [r.gpuIndex, r.pid, r.type, r.smPercent, r.command]),
    [
      [0, 25384, "C", 37, "nvidia-cuda-mps"],
      [2, 11952, "C+G", null, "renderD128 --cr"],
      [3, 11953, "G", 4, ""],
    ],
    "the `-` line of a GPU without processes is skipped; a missing name is empty",
  );
  const dated = parsePmon(
    [
      "#Date       Time        gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command",
      "#YYYYMMDD   HH:MM:SS    Idx           #    C/G      %      %      %      %      %      %    name",
      " 20261205   12:44:01      0        698     C     99      9      -      -      -      -    python3",
    ].join("\r\n"),
  );
  assert.deepEqual(dated.problems, []);
  assert.deepEqual(
    dated.rows.map((r) => [r.gpuIndex, r.pid, r.smPercent]),
    [[0, 698, 99]],
  );
  const mig = parsePmon(
    [
      "# gpu   gi   ci        pid   type     sm    mem    command",
      "# Idx   Id   Id          #    C/G      %      %    name",
      "    0    1    0       4242     C      -      -    python3",
    ].join("\n"),
  );
  assert.deepEqual(
    mig.rows.map((r) => [r.gpuIndex, r.pid, r.smPercent]),
    [[0, 4242, null]],
  );
});

test("broken output: each bad line is a problem with its reason, never an exception; good lines still count", () => {
  const p = parsePmon(
    [
      "Failed to initialize NVML: Unknown Error",
      "# gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command",
      "# something else entirely",
      "# Idx           #    C/G      %      %      %      %      %      %    name",
      "    0        698     C     99      9      -      -      -      -    python3",
      "    0        719     C    N/A      -      -      -      -      -    python3",
      "    x        720     C      1      -      -      -      -      -    python3",
      "    0       abc!     C      1      -      -      -      -      -    python3",
      "    0          0     C      1      -      -      -      -      -    python3",
      "    0        721     C      1",
      "    0        722     C      7     -5      -      -      -      -    python3",
      "\u0000\u0001garbage",
    ].join("\n"),
  );
  assert.deepEqual(
    p.rows.map((r) => [r.pid, r.smPercent]),
    [[698, 99]],
  );
  assert.deepEqual(
    p.problems.map((x) => [x.line, x.reason]),
    [
      [1, "a process line before pmon's column header"],
      [3, "a header line that matches no column header"],
      [6, 'column sm: "N/A" is neither a number nor -'],
      [7, "no GPU index in the gpu column"],
      [8, "no process id in the pid column"],
      [9, "no process id in the pid column"],
      [10, "4 columns where the header names 10"],
      [11, 'column mem: "-5" is neither a number nor -'],
      [12, "1 columns where the header names 10"],
    ],
  );
  const reader = new PmonReader();
  assert.deepEqual(reader.push(""), { kind: "blank" });
  assert.equal(reader.columns.length, 0);
});

test("pmonSnapshot: ok with every listed process; failures in calm words (exit code, timeout, no table, nothing readable)", () => {
  const ok = pmonSnapshot({ kind: "ok", stdout: capture("pmon-c1-u-0.txt") }, 1000);
  assert.equal(ok.state, "ok");
  assert.equal(ok.at, 1000);
  assert.deepEqual(
    [...ok.sm],
    [
      ["0:698", 99],
      ["0:719", null],
    ],
  );
  const header = capture("pmon-c1-u-0.txt").split("\n").slice(0, 2).join("\n");
  assert.deepEqual(pmonSnapshot({ kind: "ok", stdout: header }, 1).state, "ok", "no process: an empty answer");
  const refused = pmonSnapshot(
    {
      kind: "failed",
      exitCode: 2,
      message: "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.",
      explanation: "nvidia-smi rejected an argument or field (exit 2: invalid argument or flag)",
    },
    5,
  );
  assert.equal(refused.state, "failed");
  assert.equal(
    refused.note,
    "nvidia-smi pmon failed: Invalid combination of input arguments. Please run 'nvidia-smi -h' for help. (nvidia-smi rejected an argument or field (exit 2: invalid argument or flag))",
  );
  const unsupported = pmonSnapshot({ kind: "failed", exitCode: 3, message: "x", explanation: "x" }, 5);
  assert.equal(unsupported.note, "nvidia-smi pmon failed: x");
  assert.equal(
    pmonSnapshot({ kind: "timeout", ms: 5000, message: "nvidia-smi did not answer within 5000 ms and was stopped" }, 5)
      .note,
    "nvidia-smi pmon: nvidia-smi did not answer within 5000 ms and was stopped",
  );
  assert.equal(
    pmonSnapshot({ kind: "ok", stdout: "No devices were found\n" }, 5).note,
    'nvidia-smi pmon printed no process table ("No devices were found")',
  );
  assert.equal(pmonSnapshot({ kind: "ok", stdout: "" }, 5).note, "nvidia-smi pmon printed no process table");
  assert.equal(
    pmonSnapshot({ kind: "ok", stdout: `${header}\n    0  oops\n` }, 5).note,
    "nvidia-smi pmon's output could not be read: line 3: 2 columns where the header names 10",
  );
  assert.equal(
    pmonSnapshot({ kind: "ok", stdout: "# gpu pid type command\n# Idx # C/G name\n" }, 5).note,
    "nvidia-smi pmon printed no sm column",
  );
});

test("smFields: the SM cell joined by (GPU, pid), and its tooltip says why a value is missing", () => {
  const snapshot: ProcessSmSnapshot = {
    state: "ok",
    sm: new Map([
      ["0:698", 99],
      ["0:719", null],
    ]),
    at: 1,
    note: "",
  };
  assert.deepEqual(smFields(snapshot, 0, 698), { smPercent: 99, sm: "99%", smNote: SM_NOTE });
  assert.deepEqual(smFields(snapshot, 0, 719), { smPercent: null, sm: NO_VALUE, smNote: SM_NO_SAMPLE });
  assert.deepEqual(smFields(snapshot, 1, 698), { smPercent: null, sm: NO_VALUE, smNote: SM_NOT_READ });
  assert.deepEqual(smFields(PROCESS_SM_OFF, 0, 698).smNote, SM_NOT_READ);
  assert.deepEqual(smFields(undefined, 0, 698).smNote, SM_NOT_READ);
  assert.deepEqual(smFields({ ...PROCESS_SM_OFF, state: "waiting" }, 0, 698).smNote, SM_NOT_READ);
  const failed = smFields(
    { ...PROCESS_SM_OFF, state: "failed", note: "nvidia-smi pmon failed: x", retryAt: 300_001 },
    0,
    698,
  );
  assert.deepEqual(failed, {
    smPercent: null,
    sm: NO_VALUE,
    smNote: "Per-process SM % is not available here: nvidia-smi pmon failed: x. GPU Pilot asks again in 5 minutes.",
  });
  assert.equal(
    smFields(
      { ...PROCESS_SM_OFF, state: "failed", note: "it comes from nvidia-smi pmon, which AMD GPUs do not have" },
      0,
      1,
    ).smNote,
    "Per-process SM % is not available here: it comes from nvidia-smi pmon, which AMD GPUs do not have.",
    "no retry promised where none comes",
  );
  assert.match(SM_NOTE, /nvidia-smi pmon's last sample, read every 15 s while the Processes tab is shown/);
  assert.match(SM_NO_SAMPLE, /did no GPU work then/);
  assert.doesNotMatch(SM_NOTE + SM_NOT_READ, /does not run/, "the old, now false text is gone");
});

test("sorting by SM: highest first, '–' rows last both ways, ties by GPU then pid", () => {
  const row = (pid: number, gpuIndex: number, smPercent: number | null) =>
    ({ pid, gpuIndex, smPercent, memoryMiB: 1, user: "u", command: "c" }) as unknown as DashboardProcess;
  const rows = [row(1, 0, null), row(2, 0, 40), row(3, 1, 99), row(4, 1, null), row(5, 0, 0), row(6, 2, 40)];
  const by = (descending: boolean) => sortProcesses(rows, { key: "sm", descending }).map((p) => p.pid);
  assert.deepEqual(by(true), [3, 2, 6, 5, 1, 4]);
  assert.deepEqual(by(false), [5, 2, 6, 3, 1, 4]);
  assert.deepEqual(
    sortProcesses(rows, { key: "memory", descending: true }).map((p) => p.pid),
    [1, 2, 5, 3, 4, 6],
    "other columns unchanged: ties by GPU then pid",
  );
});

test("pmonCalls: -i with at most 4 GPUs a call (pmon -h: 'limited to a maximum of 4 devices'), sorted, duplicates and bad indices dropped", () => {
  assert.equal(PMON_MAX_GPUS, 4);
  assert.deepEqual(pmonCalls([]), []);
  assert.deepEqual(pmonCalls([1]), [[...PMON_ARGS, "-i", "1"]]);
  assert.deepEqual(pmonCalls([7, 0, 3, 3, 5, 1, 2, -1, 1.5]), [
    [...PMON_ARGS, "-i", "0,1,2,3"],
    [...PMON_ARGS, "-i", "5,7"],
  ]);
  const help = readFileSync(join(ROOT, "test", "fixtures", "nvidia-smi", "h100-pmon", "pmon-help.txt"), "utf8");
  assert.match(help.replace(/\s+/g, " "), /Monitoring is limited to a maximum of 4 devices/);
});
