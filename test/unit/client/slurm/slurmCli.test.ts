/**
 * The Slurm commands' wrapper (client/src/slurm/cli.ts) on a stand-in squeue
 * (test/fixtures/slurm/bin/squeue): a squeue without --json falls back to the format string (the
 * real 22.05 capture); a controller that is down is an error with Slurm's words and does not make
 * GPU Pilot give up --json; a program that is not installed says so; a slow one is cut at its limit.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { ROOT } from "../../support/helpers";
import { queryJobs, resetSqueueProbe, runSlurm, SlurmError, parseScontrolJob } from "../../../../client/src/slurm/cli";

const BIN = path.join(ROOT, "test", "fixtures", "slurm", "bin");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "gp-slurm-cli-"));
after(() => fs.rmSync(TMP, { recursive: true, force: true }));
const LOG = path.join(TMP, "calls.txt");
const env = (mode: string) => ({ PATH: `${BIN}:${process.env.PATH}`, FAKE_SQUEUE_MODE: mode, FAKE_SQUEUE_LOG: LOG });
const calls = () => fs.readFileSync(LOG, "utf8").trim().split("\n");

test("a squeue without --json: the format-string fallback, learnt once", async () => {
  resetSqueueProbe();
  fs.rmSync(LOG, { force: true });
  const r = await queryJobs({ env: env("old"), user: "root" });
  assert.equal(r.source, "format");
  assert.deepEqual(
    r.jobs.map((j) => [j.id, j.state]),
    [
      [4, "PENDING"],
      [3, "PENDING"],
      [2, "RUNNING"],
      [1, "COMPLETED"],
    ],
  );
  assert.equal((await queryJobs({ env: env("old") })).source, "format");
  assert.deepEqual(calls(), [
    "--me --json",
    "--me -t all -h -o %i|%j|%T|%P|%u|%b|%N|%D|%r|%l|%M|",
    "--me -t all -h -o %i|%j|%T|%P|%u|%b|%N|%D|%r|%l|%M|",
  ]);
});

test("a controller that is down: Slurm's message, and --json is tried again next time", async () => {
  resetSqueueProbe();
  fs.rmSync(LOG, { force: true });
  await assert.rejects(
    queryJobs({ env: env("down") }),
    (e: unknown) =>
      e instanceof SlurmError &&
      e.message === "squeue --me --json: slurm_load_jobs error: Unable to contact slurm controller (connect failure)",
  );
  await assert.rejects(queryJobs({ env: env("down") }), /Unable to contact slurm controller/);
  assert.deepEqual(calls(), ["--me --json", "--me --json"]);
});

test("Slurm's programs without a configuration: the message is the `fatal:` line, not the first `error:` line before it", async () => {
  const dir = fs.mkdtempSync(path.join(TMP, "noconf-"));
  // What Debian's slurm-wlm 22.05 sinfo prints with no slurm.conf and no DNS SRV record (exit 1).
  fs.writeFileSync(
    path.join(dir, "sinfo"),
    [
      "#!/bin/sh",
      "echo 'sinfo: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host' >&2",
      "echo 'sinfo: error: fetch_config: DNS SRV lookup failed' >&2",
      "echo 'sinfo: error: _establish_config_source: failed to fetch config' >&2",
      "echo 'sinfo: fatal: Could not establish a configuration source' >&2",
      "exit 1",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  await assert.rejects(
    runSlurm("sinfo", ["-h"], { env: { PATH: `${dir}:${process.env.PATH}` } }),
    (e: unknown) =>
      e instanceof SlurmError && e.message === "sinfo -h: sinfo: fatal: Could not establish a configuration source",
  );
});

test("not installed, and too slow", async () => {
  await assert.rejects(
    runSlurm("sinfo-not-installed", [], {}),
    (e: unknown) => e instanceof SlurmError && e.notFound && /not installed or not on PATH/.test(e.message),
  );
  const dir = TMP;
  fs.writeFileSync(path.join(dir, "sinfo"), "#!/bin/sh\nexec sleep 30\n", { mode: 0o755 });
  const t = Date.now();
  await assert.rejects(
    runSlurm("sinfo", ["-h"], { env: { PATH: `${dir}:${process.env.PATH}` }, timeoutMs: 500 }),
    (e: unknown) =>
      e instanceof SlurmError &&
      e.timedOut &&
      e.message === "sinfo -h did not answer within 1 s (is slurmctld reachable?)",
  );
  assert.ok(Date.now() - t < 10_000);
});

test("parseScontrolJob: paths with spaces, and 22.05's unexpanded %%", () => {
  const text = [
    "JobId=7 JobName=probe env",
    "   UserId=ada(1000) GroupId=ada(1000) MCS_label=N/A",
    "   JobState=RUNNING Reason=None Dependency=(null)",
    "   WorkDir=/home/ada/it's a dir",
    "   StdErr=/home/ada/it's a dir/100%%/slurm-probe-7.out",
    "   StdIn=/dev/null",
    "   StdOut=/home/ada/it's a dir/100%%/slurm-probe-7.out",
  ].join("\n");
  assert.deepEqual(parseScontrolJob(text), {
    state: "RUNNING",
    user: "ada",
    stdout: "/home/ada/it's a dir/100%/slurm-probe-7.out",
    workDir: "/home/ada/it's a dir",
  });
});

/** Whether process `pid` is still alive (signal 0); a zombie reaped by init counts as gone. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = fs.existsSync(`/proc/${pid}/stat`) ? fs.readFileSync(`/proc/${pid}/stat`, "utf8") : "";
  return !/^\d+ \(.*\) Z/.test(stat);
}

test("issue 46 item 6: a wrapper script's child dies with it at the limit, not 8 s later", async () => {
  const dir = fs.mkdtempSync(path.join(TMP, "wrap-"));
  const pidFile = path.join(dir, "child.pid");
  // A site wrapper / `ssh login squeue` shim: the real work is a child holding stdout open.
  fs.writeFileSync(path.join(dir, "squeue"), `#!/bin/sh\nsleep 8 &\necho $! > '${pidFile}'\nwait\n`, { mode: 0o755 });
  const t = Date.now();
  await assert.rejects(
    runSlurm("squeue", ["--me"], { env: { PATH: `${dir}:${process.env.PATH}` }, timeoutMs: 500 }),
    (e: unknown) => e instanceof SlurmError && e.timedOut,
  );
  const took = Date.now() - t;
  const child = Number(fs.readFileSync(pidFile, "utf8"));
  assert.ok(took < 2500, `returned after ${took} ms (limit 500 ms)`);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(alive(child), false, `the wrapper's child ${child} was killed with it`);
});

test("issue 46 item 6: a 300 MB squeue output is cut at the cap: a clear error, memory bounded", () => {
  const dir = fs.mkdtempSync(path.join(TMP, "flood-"));
  fs.writeFileSync(path.join(dir, "squeue"), "#!/bin/sh\nexec head -c 300000000 /dev/zero\n", { mode: 0o755 });
  // In a process of its own, so that the peak RSS is this call's.
  const script = `
    const { runSlurm } = require(${JSON.stringify(path.join(ROOT, "client/src/slurm/cli.ts"))});
    const before = process.resourceUsage().maxRSS;
    runSlurm("squeue", ["--me", "--json"], { env: { PATH: ${JSON.stringify(dir)} + ":" + process.env.PATH }, timeoutMs: 60000 })
      .then(() => console.log(JSON.stringify({ ok: true })), (e) => console.log(JSON.stringify({ message: e.message, grewKiB: process.resourceUsage().maxRSS - before })));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
    encoding: "utf8",
    cwd: ROOT,
    timeout: 60_000,
  });
  const out = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as { message?: string; grewKiB?: number };
  assert.match(out.message ?? "", /^squeue --me --json printed more than 32 MiB: stopped$/);
  assert.ok((out.grewKiB ?? Infinity) < 128 * 1024, `peak RSS grew ${Math.round((out.grewKiB ?? 0) / 1024)} MiB`);
});

test("issue 46 item 6: a squeue --json past the cap: the user's own jobs in the format string instead", async () => {
  resetSqueueProbe();
  fs.rmSync(LOG, { force: true });
  const r = await queryJobs({ env: env("huge"), user: "root" });
  assert.equal(r.source, "format");
  assert.deepEqual(
    r.jobs.map((j) => j.id),
    [4, 3, 2, 1],
  );
  assert.deepEqual(calls(), ["--me --json", "--me -t all -h -o %i|%j|%T|%P|%u|%b|%N|%D|%r|%l|%M|"]);
});
