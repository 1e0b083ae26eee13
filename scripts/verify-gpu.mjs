#!/usr/bin/env node
// `npm run verify:gpu`: proves each rule with a runtime claim on real GPUs (issue 10).
//  1. here: the CLI must flag verify/GPUnnn/bad.py with GPUnnn and not verify/GPUnnn/fixed.py;
//  2. on a machine with nvidia-smi and at least 2 GPUs: runs verify/run.py (each program in a fresh
//     interpreter; physical GPU read by pid from nvidia-smi) and checks expect.json;
//  3. on a machine with at least 1 GPU: runs verify/frameworks/probe.py, the measured table of
//     freeze points, allocator, CUDA_VISIBLE_DEVICES values and JAX variables (issue 21); writes it
//     to --frameworks-out (default verify/results-frameworks-local.json) for committing, where
//     test/unit/server/engine/frameworkTable.test.ts holds the engine's tables to it;
//  4. renders docs/ground-truth.md from the results (`--from FILE` renders a results file fetched
//     from a GPU machine instead of running step 2; `--frameworks-from FILE` the same for step 3;
//     without a GPU the committed verify/results-frameworks-*.json is rendered).
// usage: node scripts/verify-gpu.mjs [--from results.json[,more.json]] [--frameworks-from FILE] [--only GPU001,...]
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync, existsSync, mkdtempSync } from "node:fs";
import { join, dirname } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (n) => {
  const i = args.indexOf(n);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = (opt("--only") ?? "").split(",").filter(Boolean);
// A pair folder is GPUnnn or GPUnnn-<what> (several pairs for one rule); the rule is its first 6 characters.
const rules = readdirSync(join(root, "verify"))
  .filter((d) => /^GPU\d{3}(-[a-z0-9-]+)?$/.test(d) && (!only.length || only.includes(d)))
  .sort();

// 1. The CLI's verdict on each pair.
const cli = (file) => {
  // --preview: a pair documents its rule's claim whether the finding is in the default set or not,
  // as fixtures do.
  const r = spawnSync(
    process.execPath,
    [join(root, "scripts", "gpu-pilot.mjs"), "check", "--preview", "--format", "json", file],
    { encoding: "utf8" },
  );
  if (r.status === 2) throw new Error(`gpu-pilot failed on ${file}: ${r.stderr}`);
  return new Set(JSON.parse(r.stdout).map((d) => d.code));
};
/**
 * A stronger finding that stands for a pair's rule on its bad program: GPU002's bad.py imports
 * eager_lib.py beside it, which initialises CUDA; the CLI follows that project module and reports the
 * write as GPU001 (ignored), which is what the pair measures (physical GPU 0).
 */
const STRONGER = { GPU002: "GPU001" };
let cliFailures = 0;
const cliRows = {};
for (const code of rules) {
  const badCodes = cli(join(root, "verify", code, "bad.py"));
  const bad = badCodes.has(code.slice(0, 6)) || badCodes.has(STRONGER[code.slice(0, 6)]);
  const fixed = cli(join(root, "verify", code, "fixed.py")).has(code.slice(0, 6));
  cliRows[code] = { bad, fixed };
  const ok = bad && !fixed;
  if (!ok) cliFailures++;
  console.log(
    `${code} CLI: bad ${bad ? "flagged" : "NOT flagged"}, fixed ${fixed ? "FLAGGED" : "clean"}${ok ? "" : "  <- FAIL"}`,
  );
}

// 2./3. The GPU runs.
const smi = spawnSync("nvidia-smi", ["-L"], { encoding: "utf8" });
const gpus = smi.status === 0 ? smi.stdout.trim().split("\n").length : 0;
let frameworksFile = opt("--frameworks-from");
if (!frameworksFile && gpus >= 1 && !opt("--from")) {
  frameworksFile = opt("--frameworks-out") ?? join(root, "verify", "results-frameworks-local.json");
  const probe = spawnSync("python3", [join(root, "verify", "frameworks", "probe.py"), "--out", frameworksFile], {
    stdio: "inherit",
  });
  if (probe.status !== 0 || !existsSync(frameworksFile)) {
    console.error("verify/frameworks/probe.py failed");
    process.exit(1);
  }
  console.log(
    `wrote ${frameworksFile}: commit it as verify/results-frameworks-<machine>.json; test/unit/server/engine/frameworkTable.test.ts then holds the engine's tables to it`,
  );
}
if (!frameworksFile) {
  const committed = readdirSync(join(root, "verify"))
    .filter((f) => /^results-frameworks-.*\.json$/.test(f))
    .sort();
  if (committed.length) frameworksFile = join(root, "verify", committed[committed.length - 1]);
}
let resultsFile = opt("--from");
if (!resultsFile) {
  if (gpus < 2) {
    console.log(
      `\nno multi-GPU machine here (nvidia-smi: ${smi.error ? "not found" : `${gpus} GPU(s)`}): ran the CLI half only.`,
    );
    console.log(`${rules.length - cliFailures} passed, ${cliFailures} failed`);
    process.exit(cliFailures ? 1 : 0);
  }
  resultsFile = join(mkdtempSync(join(tmpdir(), "gp-verify-")), "results.json");
  const run = spawnSync(
    "python3",
    [join(root, "verify", "run.py"), "--out", resultsFile, ...(only.length ? ["--only", only.join(",")] : [])],
    { stdio: "inherit" },
  );
  if (!existsSync(resultsFile)) {
    console.error("verify/run.py wrote no results");
    process.exit(1);
  }
  if (run.status !== 0) console.log("some GPU measurements contradict expect.json (see above)");
}

// 3. docs/ground-truth.md
// `--from A,B`: several results files (e.g. the 2-GPU run and a later 1-GPU run of new pairs); rows
// are merged, the first file's environment heads the page and each further one gets a line.
const [res, ...more] = resultsFile.split(",").map((f) => JSON.parse(readFileSync(f, "utf8")));
for (const m of more) {
  res.rows.push(...m.rows);
  res.passed += m.passed;
  res.failed += m.failed;
}
const env = res.environment;
const esc = (s) =>
  String(s ?? "")
    .replace(/\|/g, "\\|")
    .replace(/\n/g, " ");
const lines = [
  "# Ground truth, re-measured: every rule with a runtime claim, on real GPUs",
  "",
  `Measured ${env.date} by \`npm run verify:gpu\` (verify/run.py) on ${env.nvidia_smi.length} x ${esc(env.nvidia_smi[0]?.split(", ")[1])} (driver ${esc(env.nvidia_smi[0]?.split(", ")[2])}),`,
  `Python ${env.python}, torch ${env.torch} (CUDA ${env.cuda}), jax ${env.jax}, cupy ${env.cupy}.`,
  "Each program ran in a fresh interpreter with CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER unset (plus",
  'the pair\'s own environment); "physical" is the GPU that nvidia-smi showed the process on, read by',
  "pid. The programs are verify/GPUnnn/{bad,fixed}.py; what each must show is verify/GPUnnn/expect.json.",
  ...more.map(
    (m) =>
      `Rules ${[...new Set(m.rows.map((r) => r.rule))].join(", ")} measured ${m.environment.date} on ${m.environment.nvidia_smi.length} x ${esc(m.environment.nvidia_smi[0]?.split(", ")[1])}, torch ${m.environment.torch}, jax ${m.environment.jax}.`,
  ),
  "TensorFlow is not installed on the GPU machines, so GPU012/GPU013 rest on TensorFlow's documentation.",
  "",
  "| rule | program | claim (expect.json) | physical GPU(s) | device_count | exception | as claimed | CLI flags it |",
  "|---|---|---|---|---|---|---|---|",
];
for (const row of res.rows) {
  const reps = row.reports ?? [];
  const phys = reps.map((r) => JSON.stringify(r.physical)).join(" ");
  const count = [...new Set(reps.map((r) => r.device_count))].join(" ");
  const err =
    reps
      .map((r) => r.error)
      .filter(Boolean)
      .map((e) => e.slice(0, 110))
      .join("; ") || "none";
  const flagged = cliRows[row.rule]
    ? row.variant === "bad"
      ? cliRows[row.rule].bad
      : cliRows[row.rule].fixed
    : undefined;
  lines.push(
    `| ${row.rule} | ${row.variant} | ${esc(row.claim)} | ${esc(phys)} | ${esc(count)} | ${esc(err)} | ${row.ok ? "yes" : `**no**: ${esc(row.problems.join("; "))}`} | ${flagged === undefined ? "" : flagged ? "yes" : "no"} |`,
  );
}
lines.push("", `${res.passed} of ${res.rows.length} measurements as claimed.`, "");
lines.push(
  "## Findings beyond ../shared/spec/ground-truth.md",
  "",
  '- GPU009: in torch 2.11, `del sys.modules["torch"]` followed by `import torch` does not silently keep the old CUDA state: the re-import raises `RuntimeError: Only a single TORCH_LIBRARY can be used to register the namespace triton`. Either way the variable written in between never takes effect.',
  '- GPU015: `os.putenv("CUDA_VISIBLE_DEVICES", "1")` then a CUDA tensor fails with `DeferredCudaCallError ... device >= 0 && device < num_gpus INTERNAL ASSERT FAILED ... device=1, num_gpus=1`: torch counted 2 devices through NVML while the CUDA runtime saw 1.',
  '- GPU011: with `init_process_group("nccl")` and no `set_device`, both torchrun ranks put their tensors on physical GPU 0 and the all-reduce fails with `DistBackendError: NCCL error ... invalid usage` (NCCL 2.28.9 rejects two ranks on one GPU).',
  '- GPU001 (removal): started with `CUDA_VISIBLE_DEVICES=""`, `is_available()` then `del os.environ["CUDA_VISIBLE_DEVICES"]`: `device_count()` afterwards reports the GPU (torch counts through NVML, which reads the environment at each call until torch itself initialises CUDA), while the CUDA runtime keeps the empty value it read at initialisation, so the first tensor on CUDA raises `RuntimeError: No CUDA GPUs are available`. A count is no proof that a late change took effect.',
  '- GPU003: with `"0,0"`, `device_count()` is 0 and the first CUDA use raises `Unexpected error from cudaGetDeviceCount() ... Error 101: invalid device ordinal`.',
  "",
);
if (frameworksFile) lines.push(...frameworksSection(JSON.parse(readFileSync(frameworksFile, "utf8")), frameworksFile));
writeFileSync(join(root, "docs", "ground-truth.md"), lines.join("\n"));
console.log(`wrote docs/ground-truth.md from ${resultsFile}`);
const failed = cliFailures + res.failed;
console.log(`${rules.length + res.rows.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

/**
 * The "Freeze points and framework variables" section of ground-truth.md from a
 * verify/frameworks/probe.py results file ({environment, cases: [{group, case, env, ...}]}).
 */
function frameworksSection(fw, file) {
  const e = fw.environment;
  const rel = file.startsWith(root) ? file.slice(root.length + 1) : file;
  const out = [
    "## Freeze points and framework variables (issue 21)",
    "",
    `Measured ${e.date} by verify/frameworks/probe.py on ${e.nvidia_smi.length} x ${esc(e.nvidia_smi[0]?.split(", ")[1])} (driver ${esc(e.nvidia_smi[0]?.split(", ")[2])}),`,
    `Python ${e.python}, torch ${e.torch} (CUDA ${e.cuda}), jax ${e.jax ?? "not measured"}, torch_geometric ${e.torch_geometric ?? "not measured"}, lightning ${e.lightning ?? "-"}, transformers ${e.transformers ?? "-"}, accelerate ${e.accelerate ?? "-"}, cupy ${e.cupy ?? "-"}, triton ${e.triton ?? "-"}.`,
    `Keras: ${e.keras ?? "not measured"}. Results: ${rel}; test/unit/server/engine/frameworkTable.test.ts holds the engine's tables (server/src/engine/frameworks.ts) to them.`,
    "",
    '**Freeze points.** Each row ran in a fresh interpreter: `import torch`, the call, then `os.environ["CUDA_VISIBLE_DEVICES"] = ""`, then',
    '`torch.ones(1, device="cuda")`. The allocation works only when the call had already made CUDA read its variables',
    "(**frozen**); it fails with `No CUDA GPUs are available` when it had not (lazy). `is_initialized` is",
    "`torch.cuda.is_initialized()` right after the call (False with frozen: the CUDA variables froze before torch's lazy init).",
    "",
    "| call (or import) | extra environment | frozen | is_initialized after |",
    "|---|---|---|---|",
  ];
  const envText = (env) =>
    Object.entries(env ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(" ");
  for (const c of fw.cases.filter((x) => x.group === "torch-freeze" || x.group === "import-freeze")) {
    const call =
      c.group === "import-freeze"
        ? c.case
        : c.case === "import torch" || c.case.startsWith("import torch+")
          ? "`import torch`"
          : c.case === "tensor"
            ? '`torch.ones(1, device="cuda")`'
            : `\`torch.${c.case.split("+")[0]}(...)\``;
    if (c.missing) {
      out.push(`| ${call} | ${esc(envText(c.env))} | not installed | |`);
      continue;
    }
    out.push(
      `| ${c.group === "import-freeze" ? `\`${c.case}\` (${esc(c.version)})` : call} | ${esc(envText(c.env))} | ${c.frozen ? "**frozen**" : "lazy"} | ${c.is_initialized_after_call ?? ""} |`,
    );
  }
  out.push(
    "",
    "**Allocator variables.** `VAR=VALUE` written in `os.environ` at the point given, then a 30 MiB tensor on cuda:",
    "an unknown key (`bogus_option:1`) raises where the value is still read; `expandable_segments:True` shows in the",
    "memory snapshot where it applied; `backend:cudaMallocAsync` shows in `torch.cuda.get_allocator_backend()`.",
    "",
    "| variable=value | written | result |",
    "|---|---|---|",
  );
  for (const c of fw.cases.filter((x) => x.group === "alloc")) {
    const m = /^(\S+?)=(\S+) (.*)$/.exec(c.case);
    const [vv, point] =
      m && !c.case.startsWith("both") ? [`${m[1]}=${m[2]}`, m[3]] : [c.case, "before import torch (environment)"];
    const result = c.error
      ? `raises \`${esc(c.error.slice(0, 150))}\``
      : `backend ${c.backend}, expandable ${c.expandable === true ? "yes (applied)" : c.expandable === false ? "no" : esc(String(c.expandable).slice(0, 60))}`;
    out.push(`| \`${esc(vv)}\` | ${esc(point)} | ${result} |`);
  }
  out.push(
    "",
    "**CUDA_VISIBLE_DEVICES values** (in the environment before `import torch`; 1 GPU machine).",
    "",
    "| value | device_count() | allocation |",
    "|---|---|---|",
  );
  for (const c of fw.cases.filter((x) => x.group === "cvd"))
    out.push(`| \`${esc(JSON.stringify(c.case))}\` | ${c.device_count} | ${c.alloc ? "works" : "fails"} |`);
  const jax = fw.cases.filter((x) => x.group === "jax" || x.group === "jax-freeze" || x.group === "keras");
  if (jax.length) {
    out.push(
      "",
      '**JAX and Keras.** jax-freeze rows: the call, then `CUDA_VISIBLE_DEVICES=""`, then `jax.devices()[0].platform` (gpu: frozen).',
      "",
      "| case | environment | result |",
      "|---|---|---|",
    );
    for (const c of jax) {
      const { group, case: id, env, rc: _rc, seconds: _seconds, warnings, ...rest } = c;
      const result =
        group === "jax-freeze"
          ? rest.error
            ? `error ${rest.error}`
            : rest.frozen
              ? "**frozen** (still gpu)"
              : `lazy (${rest.platform_after})`
          : rest.error
            ? `raises \`${esc(rest.error.slice(0, 200))}\`${warnings ? ` (stderr: ${esc(warnings[0].slice(0, 160))})` : ""}`
            : esc(JSON.stringify(rest));
      out.push(`| ${group}: ${esc(id)} | ${esc(envText(env))} | ${result} |`);
    }
  }
  out.push("");
  return out;
}
