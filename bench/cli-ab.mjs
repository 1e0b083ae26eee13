// Interleaved A/B of two CLI builds as whole processes (issue 20): per round, A then B then B then
// A (the order alternates, so a load trend hits both alike), each `node DIST/cli.js check --format
// json TREE`; prints the load average before each round, the medians and the ratio B/A, and checks
// that both print the same bytes (stdout). With /usr/bin/time (GNU time) on the machine, each run's
// CPU time (user + system, all threads) is taken too: less disturbed than wall time by other load on
// a shared machine (it still counts the slower caches and cores of a loaded one).
// usage: node bench/cli-ab.mjs --a DIR --b DIR [--tree PATH] [--rounds N] [--workers N] [--label TEXT]
//   --a, --b   folders holding a built cli.js (e.g. a copy of dist/ from main, and dist/)
//   --tree     what to check (default: the python3-torch tree of scripts/debian-corpus.mjs in .cache/debian)
//   --workers  sets GPU_PILOT_WORKERS (1: one thread, less sensitive to other load on the machine)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const a = opt("--a"),
  b = opt("--b");
if (!a || !b) {
  console.error("usage: node bench/cli-ab.mjs --a DIR --b DIR [--tree PATH] [--rounds N] [--workers N]");
  process.exit(2);
}
const tree = opt("--tree", join(root, ".cache", "debian", "python3-torch_1.13.1+dfsg-4"));
const rounds = Number(opt("--rounds", "5"));
const workers = opt("--workers", null);
const env = { ...process.env, ...(workers ? { GPU_PILOT_WORKERS: workers } : {}) };

const TIME = "/usr/bin/time";
const scratch = mkdtempSync(join(tmpdir(), "gpu-pilot-cli-ab-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

/** Wall seconds of one whole `check` process of the build in `dir`, its CPU seconds (null without GNU time), and its stdout. */
function run(dir) {
  // Every round checks every file: builds that keep a result cache (cliCache.ts) are run without it.
  const noCache = readFileSync(join(dir, "cli.js"), "utf8").includes('"--no-cache"') ? ["--no-cache"] : [];
  const args = [join(dir, "cli.js"), "check", "--format", "json", "--exit-zero", ...noCache, tree];
  const cpuFile = join(scratch, "cpu");
  const timed = existsSync(TIME);
  const t = process.hrtime.bigint();
  const r = timed
    ? spawnSync(TIME, ["-f", "%U %S", "-o", cpuFile, process.execPath, ...args], {
        env,
        encoding: "utf8",
        maxBuffer: 1 << 28,
      })
    : spawnSync(process.execPath, args, { env, encoding: "utf8", maxBuffer: 1 << 28 });
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0) throw new Error(`${dir}: exit ${r.status}: ${r.stderr.slice(-2000)}`);
  const cpu = timed
    ? readFileSync(cpuFile, "utf8")
        .trim()
        .split(/\s+/)
        .map(Number)
        .reduce((x, y) => x + y, 0)
    : null;
  return { seconds, cpu, out: r.stdout };
}

const times = { a: [], b: [] };
const cpus = { a: [], b: [] };
let same = true;
for (let i = 0; i < rounds; i++) {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
  const order = i % 2 === 0 ? ["a", "b", "b", "a"] : ["b", "a", "a", "b"];
  const outs = {};
  for (const k of order) {
    const r = run(k === "a" ? a : b);
    times[k].push(r.seconds);
    if (r.cpu !== null) cpus[k].push(r.cpu);
    if (outs[k] !== undefined && outs[k] !== r.out) same = false;
    outs[k] = r.out;
  }
  if (outs.a !== outs.b) same = false;
  console.log(
    `round ${i + 1} (load ${load}): a ${times.a
      .slice(-2)
      .map((s) => s.toFixed(3))
      .join(", ")} s; b ${times.b
      .slice(-2)
      .map((s) => s.toFixed(3))
      .join(", ")} s`,
  );
}
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ma = median(times.a),
  mb = median(times.b);
const cpu = cpus.a.length
  ? `; CPU (user+sys) a median ${median(cpus.a).toFixed(3)} s, b median ${median(cpus.b).toFixed(3)} s, b/a ${(median(cpus.b) / median(cpus.a)).toFixed(3)}`
  : "";
console.log(
  `${opt("--label", tree)}: wall a median ${ma.toFixed(3)} s (min ${Math.min(...times.a).toFixed(3)}), b median ${mb.toFixed(3)} s (min ${Math.min(...times.b).toFixed(3)}), b/a ${(mb / ma).toFixed(3)}; ${times.a.length} runs each${workers ? `, GPU_PILOT_WORKERS=${workers}` : ""}; output ${same ? "identical" : "DIFFERS"}${cpu}`,
);
process.exit(same ? 0 : 1);
