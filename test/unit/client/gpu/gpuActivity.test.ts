// The SM activity stream (client/src/gpu/activity.ts) against the fake nvidia-smi's dmon replay of
// the real H200 captures, its unsupported modes, and scripts that hang, trickle or die.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ActivityStream,
  type ActivityEvent,
  GIVE_UP_AFTER_FAULTS,
  NOT_AVAILABLE,
} from "../../../../client/src/gpu/activity";
import { ROOT } from "../../support/root";
import { until } from "../../support/until";

const FAKE = join(ROOT, "test", "fixtures", "bin", "nvidia-smi");
const tmp = mkdtempSync(join(tmpdir(), "gpu-pilot-activity-"));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

function streamFor(mode: string, path = FAKE, timeoutMs = 2000) {
  const s = new ActivityStream({
    path,
    intervalMs: 1000,
    timeoutMs,
    env: { FAKE_NVIDIA_SMI_MODE: mode, FAKE_NVIDIA_SMI_DMON_MS: "30" },
    backoffInitialMs: 20,
    backoffMaxMs: 100,
  });
  const events: ActivityEvent[] = [];
  s.on((e) => events.push(e));
  return { s, events, faults: () => events.filter((e) => e.kind === "fault") };
}

function script(name: string, body: string): string {
  const p = join(tmp, name);
  writeFileSync(p, `#!/usr/bin/env node\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

test("spin: GPU 0 busy but idle (GPU-Util 100, SM activity 0), GPU 1 idle, both supported", async () => {
  const { s } = streamFor("spin");
  s.start();
  await until(() => s.snapshot.gpus[0]?.busyButIdle === true && s.snapshot.gpus.length === 2, "GPU 0 flagged");
  assert.equal(s.snapshot.state, "on");
  assert.equal(s.snapshot.note, "");
  assert.deepEqual(
    s.snapshot.gpus.map((g) => [g.index, g.support, g.latest?.gpuUtilPercent, g.latest?.smActivityPercent]),
    [
      [0, "supported", 100, 0],
      [1, "supported", 0, 0],
    ],
  );
  assert.equal(s.snapshot.gpus[1].busyButIdle, false);
  assert.ok(s.pid, "dmon runs");
  await s.stop();
  assert.equal(s.pid, undefined);
  assert.equal(s.isRunning, false);
});

test("full: SM activity 95 %, tensor 92 %, no flag", async () => {
  const { s } = streamFor("full");
  s.start();
  await until(() => s.snapshot.gpus[0]?.latest?.smActivityPercent === 95, "steady state of dmon-full.txt");
  assert.deepEqual([s.snapshot.gpus[0].latest?.tensorActivityPercent, s.snapshot.gpus[0].busyButIdle], [92, false]);
  await s.stop();
});

test("nogpm: only '-' after the third sample: unsupported, said once, dmon stopped for good", async () => {
  const { s, events } = streamFor("nogpm");
  s.start();
  await until(() => s.snapshot.state === "unsupported", "unsupported");
  assert.equal(s.snapshot.note, NOT_AVAILABLE);
  assert.deepEqual(
    s.snapshot.gpus.map((g) => g.support),
    ["unsupported", "unsupported"],
  );
  assert.equal(s.isRunning, false);
  await until(() => s.pid === undefined, "dmon killed");
  const updates = events.filter((e) => e.kind === "update" && e.snapshot.state === "unsupported").length;
  s.start(); // probed once: starting again does nothing
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(s.isRunning, false);
  assert.equal(events.filter((e) => e.kind === "update" && e.snapshot.state === "unsupported").length, updates);
  assert.equal(updates, 1);
});

test("nodmon: dmon exits before any value: unsupported with nvidia-smi's words", async () => {
  const { s, faults } = streamFor("nodmon");
  s.start();
  await until(() => s.snapshot.state === "unsupported", "unsupported");
  assert.match(
    s.snapshot.note,
    /^SM activity: not available on this GPU\/driver \(nvidia-smi dmon failed: .*Invalid combination of input arguments/,
  );
  assert.equal(faults().length, 0, "no restart");
});

test("a missing nvidia-smi: unsupported, no restart loop", async () => {
  const { s, faults } = streamFor("busy", join(tmp, "no-such-nvidia-smi"));
  s.start();
  await until(() => s.snapshot.state === "unsupported", "unsupported");
  assert.match(s.snapshot.note, /could not be started \(ENOENT\)/);
  assert.equal(faults().length, 0);
});

test("a dmon that worked and then trickles bytes without a newline is killed and restarted", async () => {
  const p = script(
    "trickle",
    `
const out = (t) => process.stdout.write(t);
out("# gpu sm smutil\\n# Idx % GPM:%\\n    0 100 0\\n    0 100 0\\n    0 100 0\\n");
setInterval(() => out("0"), 50);`,
  );
  const { s, faults } = streamFor("busy", p, 200);
  s.start();
  await until(() => faults().length >= 1, "a fault", 10_000);
  const f = faults()[0];
  assert.match(f.kind === "fault" ? f.message : "", /printed no complete sample for 1200 ms/);
  await until(() => s.snapshot.gpus[0]?.busyButIdle === true, "samples again after the restart");
  assert.equal(s.snapshot.state, "on");
  await s.stop();
});

test(`a dmon that never prints a sample is given up after ${GIVE_UP_AFTER_FAULTS} hangs`, async () => {
  const { s, faults } = streamFor("hang", FAKE, 100);
  s.start();
  await until(() => s.snapshot.state === "unsupported", "given up", 20_000);
  assert.equal(faults().length, GIVE_UP_AFTER_FAULTS - 1, "restarted twice, then gave up");
  assert.match(s.snapshot.note, /printed no complete sample/);
});
