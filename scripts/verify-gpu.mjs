#!/usr/bin/env node
// `npm run verify:gpu`: proves each rule with a runtime claim on real GPUs (issue 10).
//  1. here: the CLI must flag verify/GPUnnn/bad.py with GPUnnn and not verify/GPUnnn/fixed.py;
//  2. on a machine with nvidia-smi and at least 2 GPUs: runs verify/run.py (each program in a fresh
//     interpreter; physical GPU read by pid from nvidia-smi) and checks expect.json;
//  3. renders docs/ground-truth.md from the results (`--from FILE` renders a results file fetched
//     from a GPU machine instead of running step 2).
// usage: node scripts/verify-gpu.mjs [--from results.json] [--only GPU001,...]
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync, existsSync, mkdtempSync } from "node:fs";
import { join, dirname } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (n) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : undefined; };
const only = (opt("--only") ?? "").split(",").filter(Boolean);
// A pair folder is GPUnnn or GPUnnn-<what> (several pairs for one rule); the rule is its first 6 characters.
const rules = readdirSync(join(root, "verify")).filter((d) => /^GPU\d{3}(-[a-z0-9-]+)?$/.test(d) && (!only.length || only.includes(d))).sort();

// 1. The CLI's verdict on each pair.
const cli = (file) => {
  const r = spawnSync(process.execPath, [join(root, "scripts", "gpu-pilot.mjs"), "check", "--format", "json", file], { encoding: "utf8" });
  if (r.status === 2) throw new Error(`gpu-pilot failed on ${file}: ${r.stderr}`);
  return new Set(JSON.parse(r.stdout).map((d) => d.code));
};
let cliFailures = 0;
const cliRows = {};
for (const code of rules) {
  const bad = cli(join(root, "verify", code, "bad.py")).has(code.slice(0, 6));
  const fixed = cli(join(root, "verify", code, "fixed.py")).has(code.slice(0, 6));
  cliRows[code] = { bad, fixed };
  const ok = bad && !fixed;
  if (!ok) cliFailures++;
  console.log(`${code} CLI: bad ${bad ? "flagged" : "NOT flagged"}, fixed ${fixed ? "FLAGGED" : "clean"}${ok ? "" : "  <- FAIL"}`);
}

// 2. The GPU run.
let resultsFile = opt("--from");
if (!resultsFile) {
  const smi = spawnSync("nvidia-smi", ["-L"], { encoding: "utf8" });
  const gpus = smi.status === 0 ? smi.stdout.trim().split("\n").length : 0;
  if (gpus < 2) {
    console.log(`\nno multi-GPU machine here (nvidia-smi: ${smi.error ? "not found" : `${gpus} GPU(s)`}): ran the CLI half only.`);
    console.log(`${rules.length - cliFailures} passed, ${cliFailures} failed`);
    process.exit(cliFailures ? 1 : 0);
  }
  resultsFile = join(mkdtempSync(join(tmpdir(), "gp-verify-")), "results.json");
  const run = spawnSync("python3", [join(root, "verify", "run.py"), "--out", resultsFile, ...(only.length ? ["--only", only.join(",")] : [])], { stdio: "inherit" });
  if (!existsSync(resultsFile)) { console.error("verify/run.py wrote no results"); process.exit(1); }
  if (run.status !== 0) console.log("some GPU measurements contradict expect.json (see above)");
}

// 3. docs/ground-truth.md
const res = JSON.parse(readFileSync(resultsFile, "utf8"));
const env = res.environment;
const esc = (s) => String(s ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ");
const lines = [
  "# Ground truth, re-measured: every rule with a runtime claim, on real GPUs",
  "",
  `Measured ${env.date} by \`npm run verify:gpu\` (verify/run.py) on ${env.nvidia_smi.length} x ${esc(env.nvidia_smi[0]?.split(", ")[1])} (driver ${esc(env.nvidia_smi[0]?.split(", ")[2])}),`,
  `Python ${env.python}, torch ${env.torch} (CUDA ${env.cuda}), jax ${env.jax}, cupy ${env.cupy}.`,
  "Each program ran in a fresh interpreter with CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset (plus",
  "the pair's own environment); \"physical\" is the GPU that nvidia-smi showed the process on, read by",
  "pid. The programs are verify/GPUnnn/{bad,fixed}.py; what each must show is verify/GPUnnn/expect.json.",
  "TensorFlow is not installed on the GPU machines, so GPU012/GPU013 rest on TensorFlow's documentation.",
  "",
  "| rule | program | claim (expect.json) | physical GPU(s) | device_count | exception | as claimed | CLI flags it |",
  "|---|---|---|---|---|---|---|---|",
];
for (const row of res.rows) {
  const reps = row.reports ?? [];
  const phys = reps.map((r) => JSON.stringify(r.physical)).join(" ");
  const count = [...new Set(reps.map((r) => r.device_count))].join(" ");
  const err = reps.map((r) => r.error).filter(Boolean).map((e) => e.slice(0, 110)).join("; ") || "none";
  const flagged = cliRows[row.rule] ? (row.variant === "bad" ? cliRows[row.rule].bad : cliRows[row.rule].fixed) : undefined;
  lines.push(`| ${row.rule} | ${row.variant} | ${esc(row.claim)} | ${esc(phys)} | ${esc(count)} | ${esc(err)} | ${row.ok ? "yes" : `**no**: ${esc(row.problems.join("; "))}`} | ${flagged === undefined ? "" : flagged ? "yes" : "no"} |`);
}
lines.push("", `${res.passed} of ${res.rows.length} measurements as claimed.`, "");
lines.push("## Findings beyond ../shared/spec/ground-truth.md", "",
  "- GPU009: in torch 2.11, `del sys.modules[\"torch\"]` followed by `import torch` does not silently keep the old CUDA state: the re-import raises `RuntimeError: Only a single TORCH_LIBRARY can be used to register the namespace triton`. Either way the variable written in between never takes effect.",
  "- GPU015: `os.putenv(\"CUDA_VISIBLE_DEVICES\", \"1\")` then a CUDA tensor fails with `DeferredCudaCallError ... device >= 0 && device < num_gpus INTERNAL ASSERT FAILED ... device=1, num_gpus=1`: torch counted 2 devices through NVML while the CUDA runtime saw 1.",
  "- GPU011: with `init_process_group(\"nccl\")` and no `set_device`, both torchrun ranks put their tensors on physical GPU 0 and the all-reduce fails with `DistBackendError: NCCL error ... invalid usage` (NCCL 2.28.9 rejects two ranks on one GPU).",
  "- GPU003: with `\"0,0\"`, `device_count()` is 0 and the first CUDA use raises `Unexpected error from cudaGetDeviceCount() ... Error 101: invalid device ordinal`.",
  "");
writeFileSync(join(root, "docs", "ground-truth.md"), lines.join("\n"));
console.log(`wrote docs/ground-truth.md from ${resultsFile}`);
const failed = cliFailures + res.failed;
console.log(`${rules.length + res.rows.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
