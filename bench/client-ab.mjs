// Interleaved activation comparison of client builds (issue 44): bench/client-load.mjs's measureOnce
// in fresh processes, each build once per round, the order rotating from round to round, after two
// untimed starts of each build (which write its code caches).
// usage: node bench/client-ab.mjs ROUNDS NAME=DIST[:cold] ...
//   DIST   a build's output folder (node esbuild.mjs --minify --outdir=DIST); the first build is the base
//   :cold  start that build with an empty cache folder every time (a build's first start)
// Prints per build: (a) = require + activate() CPU ms and until-ready CPU ms (medians, min–max), and
// the median of the per-round differences from the base build.
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildFake, measureOnce } from "./client-load.mjs";

const rounds = Number(process.argv[2]);
const builds = process.argv.slice(3).map((arg) => {
  const [name, spec] = arg.split("=");
  const [dir, mode] = spec.split(":");
  return { name, dir, cold: mode === "cold", cache: join(tmpdir(), "gp-client-ab", name), rows: [] };
});
if (!(rounds > 0) || builds.length < 2) {
  console.error("usage: node bench/client-ab.mjs ROUNDS NAME=DIST[:cold] NAME=DIST[:cold] ...");
  process.exit(2);
}
const fake = buildFake();
/** One fresh start of build `b`, with its own cache folder (emptied first when cold). */
async function start(b) {
  if (b.cold) rmSync(b.cache, { recursive: true, force: true });
  mkdirSync(b.cache, { recursive: true, mode: 0o700 });
  process.env.GP_CLIENT_BUNDLE = join(b.dir, "client.js");
  process.env.XDG_CACHE_HOME = b.cache;
  return measureOnce(fake);
}
for (const b of builds) {
  rmSync(b.cache, { recursive: true, force: true });
  await start(b);
  await start(b);
}
for (let r = 0; r < rounds; r++)
  for (let i = 0; i < builds.length; i++) {
    const b = builds[(i + r) % builds.length];
    b.rows.push(await start(b));
  }
/** The median and min–max of the numbers among `xs` (NaN and null left out), sorted once. */
const stats = (xs) => {
  const s = xs.filter((x) => typeof x === "number" && !Number.isNaN(x)).sort((x, y) => x - y);
  return { median: s[Math.floor(s.length / 2)], range: `${s[0]?.toFixed(1)}–${s.at(-1)?.toFixed(1)}` };
};
const shown = (xs) => {
  const { median, range } = stats(xs);
  return `${median?.toFixed(1)} ms (${range})`;
};
const activation = (r) => r.load_cpu_ms + r.activate_cpu_ms;
const ready = (r) => r.ready_cpu_ms ?? NaN;
const [base] = builds;
for (const b of builds) {
  const diff = (k) => stats(b.rows.map((r, i) => k(r) - k(base.rows[i]))).median?.toFixed(1);
  console.log(
    `${b.name.padEnd(10)} cache ${b.rows[0].code_cache}  (a) ${shown(b.rows.map(activation))}` +
      `  ready ${shown(b.rows.map(ready))}` +
      (b === base ? "" : `  (a) minus ${base.name} ${diff(activation)}, ready minus ${base.name} ${diff(ready)}`),
  );
}
