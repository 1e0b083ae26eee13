#!/usr/bin/env node
// A throw-away single-node Slurm cluster with fake GPUs, for the tests (issue 23): slurmctld, slurmd
// and munged started by hand with every file in one temporary folder, stopped by pid afterwards.
//
//   import { slurmAvailability, startCluster } from "../../scripts/slurm-cluster.mjs";
//   const why = slurmAvailability();            // null when it can run, else the reason it cannot
//   const c = await startCluster({ gpus: 2 });  // c.env.SLURM_CONF; c.nodeName; c.jobsDir
//   ...; await c.stop();                        // cancels jobs, stops the daemons by pid, removes the folder
//
//   node scripts/slurm-cluster.mjs up [BASE]   # by hand: prints `export SLURM_CONF=...`
//   node scripts/slurm-cluster.mjs down BASE
//
// What it does (the facts come from ../shared/slurm-host.md, tried with Slurm 22.05.8 on Debian 12):
// SlurmUser=root, no cgroups (proctrack/linuxproc, task/none), select/cons_tres; the GPUs are
// character devices with NVIDIA's major number 195 made with mknod (regular files are refused by
// slurmd, which then sets no CUDA_VISIBLE_DEVICES), listed as File= in gres.conf. Unlike that
// recipe's scripts, the two Slurm ports are free ports chosen at start, so that clusters of
// several test runs on one machine never collide. Every Slurm command finds the cluster only
// through SLURM_CONF (in `env`). Needs root (mknod; slurmd starts jobs as their users).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./freePort.mjs";

/** The programs the cluster needs, all looked up on PATH (plus /usr/sbin, where Debian puts the daemons). */
export const SLURM_PROGRAMS = [
  "slurmctld",
  "slurmd",
  "munged",
  "mungekey",
  "sbatch",
  "squeue",
  "sinfo",
  "scontrol",
  "scancel",
  "sdiag",
  "mknod",
];

const SEARCH_PATH = () =>
  [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"].filter((d) => d && path.isAbsolute(d));

/** Absolute path of `name` on PATH or in /usr/sbin, or null. */
export function findExecutable(name) {
  for (const dir of SEARCH_PATH()) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  return null;
}

/**
 * Null when a cluster can be started here, else the reason it cannot (for a test's skip message):
 * a missing program (install with `apt-get install --no-install-recommends slurm-wlm munge`) or not root.
 */
export function slurmAvailability() {
  const missing = SLURM_PROGRAMS.filter((p) => !findExecutable(p));
  if (missing.length)
    return `Slurm is not installed here (missing ${missing.join(", ")}; apt-get install --no-install-recommends slurm-wlm munge)`;
  if (typeof process.getuid === "function" && process.getuid() !== 0)
    return "starting a test Slurm cluster needs root (mknod for the fake GPUs; slurmd runs jobs as their users)";
  return null;
}

/** execa, loaded on first use (ESM only; a dynamic import keeps this module loadable from the CommonJS-compiled tests). */
const execa = async (...a) => (await import("execa")).execa(...a);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** True while process `pid` exists and is no zombie (orphaned daemons linger as zombies until PID 1 reaps them). */
export function alive(pid) {
  try {
    const st = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/^State:\s+(\S)/m);
    return !!st && st[1] !== "Z";
  } catch {
    return false;
  }
}

function readPid(file) {
  try {
    const n = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** The tail of a daemon log's error lines (pmix noise left out), for a failure message. */
function logErrors(file) {
  try {
    return fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => /fatal|error/i.test(l) && !/pmix/.test(l))
      .slice(-3)
      .join("\n");
  } catch {
    return "(no log)";
  }
}

/**
 * Runs a Slurm client command against the cluster of `env` (argument array, 10 s limit: client
 * commands retry for about 9 s when slurmctld is down). Never throws: returns execa's result.
 */
export function slurmCommand(env, program, args, timeout = 10_000) {
  return execa(program, args, { env: { ...process.env, ...env }, timeout, reject: false, stdin: "ignore" });
}

/**
 * Waits until job `id` reaches a final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...) and
 * returns `scontrol show job -o`'s fields as a map (JobState, ExitCode, StdOut, ...).
 * @throws Error after `timeoutMs` with the last state seen.
 */
export async function waitJob(env, id, { timeoutMs = 60_000, states = FINAL_STATES } = {}) {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    const r = await slurmCommand(env, "scontrol", ["show", "job", String(id), "-o"]);
    const fields = parseScontrolLine(r.stdout ?? "");
    last = fields.get("JobState") ?? `(scontrol: ${(r.stderr ?? "").trim()})`;
    if (states.includes(fields.get("JobState"))) return fields;
    await sleep(100);
  }
  throw new Error(`job ${id} did not reach ${states.join("/")} within ${timeoutMs} ms (last state ${last})`);
}

/** Job states after which a job runs no more (scontrol's JobState). */
export const FINAL_STATES = [
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "OUT_OF_MEMORY",
  "NODE_FAIL",
  "PREEMPTED",
  "BOOT_FAIL",
  "DEADLINE",
];

/** `Key=Value` fields of one `scontrol show job -o` line (values contain no spaces there, except Command= which is last-ish; good enough for states and paths without spaces). */
export function parseScontrolLine(line) {
  const out = new Map();
  for (const m of line.matchAll(/(?:^|\s)([A-Za-z:/]+)=(\S*)/g)) if (!out.has(m[1])) out.set(m[1], m[2]);
  return out;
}

/**
 * Starts a cluster. Options: `base` (folder; default a fresh one under the temp dir), `nodeName`
 * (default `gpunode1`: fixed, so expectations are the same on every machine; NodeAddr is 127.0.0.1,
 * so it never has to resolve), `gpus` (fake GPUs, default 2), `cpus` (CPUs advertised, default 4, so
 * that a long job and a short one run together on a 2-core machine).
 * @returns {base, conf, env: {SLURM_CONF}, nodeName, gpus, partition: "gpu", jobsDir, stop()}.
 * @throws Error saying which daemon died or what did not answer (with its log's last errors); what
 *   was started is stopped first.
 */
export async function startCluster({ base, nodeName = "gpunode1", gpus = 2, cpus = 4, keep = false } = {}) {
  const why = slurmAvailability();
  if (why) throw new Error(why);
  const B = base ?? fs.mkdtempSync(path.join(os.tmpdir(), "gpu-pilot-slurm-"));
  for (const d of ["etc", "munge-key", "munge", "state", "spool", "log", "run", "dev", "jobs"])
    fs.mkdirSync(path.join(B, d), { recursive: true });
  fs.chmodSync(B, 0o755);
  fs.chmodSync(path.join(B, "munge"), 0o755);
  fs.chmodSync(path.join(B, "munge-key"), 0o700);
  fs.chmodSync(path.join(B, "jobs"), 0o1777);
  const conf = path.join(B, "etc", "slurm.conf");
  const env = { SLURM_CONF: conf };
  const cluster = {
    base: B,
    conf,
    env,
    nodeName,
    gpus,
    partition: "gpu",
    jobsDir: path.join(B, "jobs"),
    stop: () => stopCluster(B, { remove: !keep && !base }),
  };
  const run = (program, args) =>
    execa(program, args, { env: { ...process.env, ...env }, stdio: "ignore", timeout: 30_000 });
  try {
    const key = path.join(B, "munge-key", "munge.key");
    if (!fs.existsSync(key)) await run(findExecutable("mungekey"), ["--create", `--keyfile=${key}`]);
    const socket = path.join(B, "munge", "munge.socket.2");
    await run(findExecutable("munged"), [
      "--force",
      `--key-file=${key}`,
      `--socket=${socket}`,
      `--pid-file=${path.join(B, "run", "munged.pid")}`,
      `--log-file=${path.join(B, "log", "munged.log")}`,
      `--seed-file=${path.join(B, "munge-key", "munged.seed")}`,
    ]);
    for (let i = 0; i < gpus; i++) {
      const dev = path.join(B, "dev", `nvidia${i}`);
      if (!fs.existsSync(dev)) await run(findExecutable("mknod"), [dev, "c", "195", String(i)]);
    }
    const hw = await execa(findExecutable("slurmd"), ["-C"], { reject: false, timeout: 10_000 });
    const mem = /RealMemory=(\d+)/.exec(hw.stdout ?? "")?.[1] ?? "1000";
    const [ctldPort, dPort] = [await freePort(), await freePort()];
    fs.writeFileSync(
      conf,
      [
        "ClusterName=gpupilot",
        "SlurmctldHost=localhost",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        `AuthInfo=socket=${socket}`,
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${dPort}`,
        `StateSaveLocation=${B}/state`,
        `SlurmdSpoolDir=${B}/spool`,
        `SlurmctldPidFile=${B}/run/slurmctld.pid`,
        `SlurmdPidFile=${B}/run/slurmd.pid`,
        `SlurmctldLogFile=${B}/log/slurmctld.log`,
        `SlurmdLogFile=${B}/log/slurmd.log`,
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        "MailProg=/bin/true",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "GresTypes=gpu",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=batch_sched_delay=0",
        "MpiDefault=none",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/filetxt",
        `JobCompLoc=${B}/log/jobcomp.txt`,
        "ReturnToService=2",
        "MinJobAge=300",
        "KillWait=5",
        "InactiveLimit=0",
        "SlurmdParameters=config_overrides",
        `NodeName=${nodeName} NodeAddr=127.0.0.1 CPUs=${cpus} Boards=1 SocketsPerBoard=1 CoresPerSocket=${cpus} ThreadsPerCore=1 RealMemory=${mem} Gres=gpu:${gpus} State=UNKNOWN`,
        `PartitionName=gpu Nodes=${nodeName} Default=YES MaxTime=INFINITE State=UP`,
        "",
      ].join("\n"),
    );
    fs.writeFileSync(
      path.join(B, "etc", "gres.conf"),
      `NodeName=${nodeName} Name=gpu File=${B}/dev/nvidia[0-${gpus - 1}]\n`,
    );
    await run(findExecutable("slurmctld"), ["-f", conf]);
    await run(findExecutable("slurmd"), ["-N", nodeName, "-f", conf]);
    // Both daemons fork and exit 0 at once, even when they die of a config error a moment later:
    // watch their pids and the node's state.
    let state = "";
    for (let i = 0; i < 150 && state !== "idle"; i++) {
      for (const d of ["slurmctld", "slurmd"]) {
        const pid = readPid(path.join(B, "run", `${d}.pid`));
        if (pid !== null && !alive(pid)) throw new Error(`${d} died: ${logErrors(path.join(B, "log", `${d}.log`))}`);
      }
      state = ((await slurmCommand(env, "sinfo", ["-h", "-n", nodeName, "-o", "%T"], 5000)).stdout ?? "").trim();
      if (state !== "idle") await sleep(200);
    }
    if (state !== "idle") throw new Error(`node ${nodeName} is '${state}', not idle; see ${B}/log/`);
    // The scheduler's first pass comes about 3 s after slurmctld starts; a batch job submitted
    // before it stays PENDING until then.
    for (let i = 0; i < 50; i++) {
      const out = (await slurmCommand(env, "sdiag", [], 5000)).stdout ?? "";
      const cycles = /Main schedule statistics[\s\S]*?Total cycles:\s*(\d+)/.exec(out)?.[1];
      if (cycles && cycles !== "0") break;
      await sleep(200);
    }
    return cluster;
  } catch (e) {
    await stopCluster(B, { remove: false });
    throw new Error(`the test Slurm cluster in ${B} did not start: ${e.message}`);
  }
}

/**
 * Stops what {@link startCluster} started in `base`: cancels every job (so that no slurmstepd or job
 * outlives slurmd), then stops slurmd, slurmctld and munged by their pid files, in that order
 * (TERM, then KILL after 15 s: slurmd ignores TERM while it cannot reach slurmctld), and removes
 * the folder when `remove`. Never throws.
 */
export async function stopCluster(base, { remove = false } = {}) {
  const env = { SLURM_CONF: path.join(base, "etc", "slurm.conf") };
  const ctld = readPid(path.join(base, "run", "slurmctld.pid"));
  if (ctld !== null && alive(ctld)) {
    const ids = ((await slurmCommand(env, "squeue", ["-h", "-o", "%i"])).stdout ?? "").split(/\s+/).filter(Boolean);
    if (ids.length) {
      await slurmCommand(env, "scancel", ids);
      for (let i = 0; i < 100; i++) {
        if (!((await slurmCommand(env, "squeue", ["-h", "-o", "%i"])).stdout ?? "").trim()) break;
        await sleep(200);
      }
    }
  }
  for (const d of ["slurmd", "slurmctld", "munged"]) {
    const f = path.join(base, "run", `${d}.pid`);
    const pid = readPid(f);
    if (pid === null) continue;
    if (alive(pid)) {
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        /* gone */
      }
      for (let i = 0; i < 150 && alive(pid); i++) await sleep(100);
      if (alive(pid))
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          /* gone */
        }
    }
    fs.rmSync(f, { force: true });
  }
  if (remove) fs.rmSync(base, { recursive: true, force: true });
}

async function main() {
  const [cmd, base] = process.argv.slice(2);
  if (cmd === "up") {
    const c = await startCluster({ base: base ? path.resolve(base) : undefined, keep: true });
    console.log(
      `export SLURM_CONF=${c.conf}   # node ${c.nodeName}, ${c.gpus} GPUs; stop: node scripts/slurm-cluster.mjs down ${c.base}`,
    );
  } else if (cmd === "down" && base) {
    await stopCluster(path.resolve(base));
    console.log("slurm down");
  } else {
    console.error("usage: node scripts/slurm-cluster.mjs up [BASE] | down BASE");
    process.exitCode = 2;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((e) => {
    console.error(e.message);
    process.exitCode = 1;
  });
}
