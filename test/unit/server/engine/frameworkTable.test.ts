/**
 * The engine's freeze-point tables (server/src/engine/frameworks.ts) against the measured table
 * verify/results-frameworks-*.json (written on a GPU machine by verify/frameworks/probe.py; issue 21).
 * Every table member must have a measurement in each results file, and agree with it: a member of
 * an *_INIT table froze CUDA_VISIBLE_DEVICES (allocating on cuda still worked after the call and
 * `CUDA_VISIBLE_DEVICES=""`), a member of a *_LAZY table did not. A new torch or jax version is one
 * probe run away: commit its results file and this test holds the tables to it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../support/helpers";
import {
  TORCH_CUDA_INIT,
  TORCH_CUDA_LAZY,
  TORCH_ACCELERATOR_INIT,
  TORCH_ACCELERATOR_LAZY,
  TORCH_OTHER_INIT,
  TORCH_OTHER_LAZY,
  JAX_INIT_FUNCTIONS,
  DEFAULT_EAGER_INIT_MODULES,
  EAGER_INIT_DEPTH,
  ALLOC_CONF_VARIABLES,
  freezes,
  type InitDepth,
} from "../../../../server/src/engine/frameworks";

interface Case {
  group: string;
  case: string;
  env: Record<string, string>;
  frozen?: boolean;
  missing?: string;
  error?: string | null;
  expandable?: boolean | string;
  backend?: string;
  device_count?: number;
  platform?: string;
  bytes_limit?: number;
  [k: string]: unknown;
}
interface Results {
  environment: Record<string, string>;
  cases: Case[];
}

const VERIFY = join(ROOT, "verify");
// The full probe's tables (probe.py); results-frameworks-*-imports.json (import_probe.py: libraries and
// framework helpers) are checked against the catalogue in initCatalogue.test.ts and below.
const files = readdirSync(VERIFY)
  .filter((f) => /^results-frameworks-.*\.json$/.test(f) && !f.endsWith("-imports.json"))
  .sort();

test("at least one measured framework table is committed", () => {
  assert.ok(files.length >= 1, "verify/results-frameworks-*.json");
});

for (const file of files) {
  const res = JSON.parse(readFileSync(join(VERIFY, file), "utf8")) as Results;
  const byId = new Map(res.cases.map((c) => [`${c.group}|${c.case}`, c]));
  const torchV = res.environment.torch;
  const get = (group: string, id: string): Case => {
    const c = byId.get(`${group}|${id}`);
    assert.ok(c, `${file} (torch ${torchV}) has no measurement "${id}" in ${group}: re-run verify/frameworks/probe.py`);
    return c;
  };
  const frozen = (group: string, id: string): boolean => {
    const c = get(group, id);
    assert.equal(
      typeof c.frozen,
      "boolean",
      `${file}: ${id} was not measured (${c.missing ?? c.error ?? JSON.stringify(c)})`,
    );
    return c.frozen!;
  };

  test(`${file}: the probe's method holds (import torch alone is lazy, a tensor freezes)`, () => {
    assert.equal(frozen("torch-freeze", "import torch"), false);
    assert.equal(frozen("torch-freeze", "tensor"), true);
  });

  test(`${file}: TORCH_CUDA_INIT members froze CUDA_VISIBLE_DEVICES, TORCH_CUDA_LAZY members did not (torch ${torchV})`, () => {
    for (const m of TORCH_CUDA_INIT.keys())
      assert.equal(
        frozen("torch-freeze", `cuda.${m}`),
        true,
        `torch.cuda.${m} is in TORCH_CUDA_INIT but measured lazy`,
      );
    for (const m of TORCH_CUDA_LAZY)
      assert.equal(
        frozen("torch-freeze", `cuda.${m}`),
        false,
        `torch.cuda.${m} is in TORCH_CUDA_LAZY but measured freezing`,
      );
  });

  test(`${file}: torch.accelerator and other torch calls match their tables`, () => {
    for (const m of TORCH_ACCELERATOR_INIT.keys())
      assert.equal(frozen("torch-freeze", `accelerator.${m}`), true, `torch.accelerator.${m}`);
    for (const m of TORCH_ACCELERATOR_LAZY)
      assert.equal(frozen("torch-freeze", `accelerator.${m}`), false, `torch.accelerator.${m}`);
    for (const p of TORCH_OTHER_INIT.keys()) assert.equal(frozen("torch-freeze", p.replace(/^torch\./, "")), true, p);
    for (const p of TORCH_OTHER_LAZY) assert.equal(frozen("torch-freeze", p.replace(/^torch\./, "")), false, p);
  });

  test(`${file}: an "nvml"-depth call is one after which torch's lazy init has not run`, () => {
    const depthOf = (id: string): InitDepth | undefined =>
      id.startsWith("cuda.")
        ? TORCH_CUDA_INIT.get(id.slice(5))
        : id.startsWith("accelerator.")
          ? TORCH_ACCELERATOR_INIT.get(id.slice(12))
          : TORCH_OTHER_INIT.get(`torch.${id}`);
    for (const c of res.cases.filter((x) => x.group === "torch-freeze" && Object.keys(x.env).length === 0)) {
      if (depthOf(c.case) === "nvml")
        assert.equal(c.is_initialized_after_call, false, `${c.case} is nvml-depth but ran the lazy init`);
    }
  });

  test(`${file}: PYTORCH_NVML_BASED_CUDA_CHECK=1 keeps is_available() from freezing; KINETO_USE_DAEMON=1 makes import torch freeze`, () => {
    assert.equal(frozen("torch-freeze", "cuda.is_available+PYTORCH_NVML_BASED_CUDA_CHECK=1"), false);
    assert.equal(frozen("torch-freeze", "import torch+KINETO_USE_DAEMON=1"), true);
  });

  test(`${file}: imports: eager-init modules froze, the other framework libraries did not`, () => {
    for (const c of res.cases.filter((x) => x.group === "import-freeze" && !x.missing)) {
      const mod = c.case.replace(/^import /, "");
      const eager = DEFAULT_EAGER_INIT_MODULES.includes(mod);
      assert.equal(
        c.frozen,
        eager,
        `import ${mod}: measured ${c.frozen ? "freezing" : "lazy"}, DEFAULT_EAGER_INIT_MODULES says ${eager ? "eager" : "lazy"}`,
      );
      if (eager && EAGER_INIT_DEPTH.get(mod) === "nvml") assert.equal(c.is_initialized_after_call, false, mod);
    }
  });

  test(`${file}: allocator variables: freezes() agrees with each measured point, for both names`, () => {
    const points: [string, InitDepth | null][] = [
      ["after import torch", null],
      ["after cuda.is_available", "nvml"],
      ["after cuda.device_count", null],
      ["after cuda.get_device_name", "driver"],
      ["after accelerator.current_device_index", "driver"],
      ["after tensor", "alloc"],
    ];
    for (const v of ALLOC_CONF_VARIABLES) {
      assert.equal(
        get("alloc", `${v}=expandable_segments:True before import torch`).expandable,
        true,
        `${v} is honoured`,
      );
      for (const [point, depth] of points) {
        const c = get("alloc", `${v}=expandable_segments:True ${point}`);
        const locked = depth !== null && freezes("torch", depth, v);
        assert.equal(c.expandable, !locked, `${v} written ${point}: measured ${c.expandable ? "applied" : "ignored"}`);
        const bogus = get("alloc", `${v}=bogus_option:1 ${point}`);
        assert.equal(!!bogus.error, !locked, `${v}=bogus_option:1 ${point}: ${bogus.error ?? "accepted"}`);
      }
    }
  });

  test(`${file}: backend:cudaMallocAsync written after import torch crashes at the first CUDA use (pytorch#104801)`, () => {
    for (const v of ALLOC_CONF_VARIABLES) {
      assert.equal(get("alloc", `${v}=backend:cudaMallocAsync before import torch`).backend, "cudaMallocAsync");
      for (const point of ["after import torch", "after cuda.is_available", "after cuda.device_count"]) {
        assert.match(
          get("alloc", `${v}=backend:cudaMallocAsync ${point}`).error ?? "",
          /parsed at runtime != allocator backend parsed at load time/,
          `${v} ${point}`,
        );
      }
      assert.equal(
        get("alloc", `${v}=backend:cudaMallocAsync after cuda.get_device_name`).backend,
        "native",
        "after a locking call the write is ignored (GPU001's case)",
      );
    }
  });

  test(`${file}: CUDA_VISIBLE_DEVICES values (GPU003)`, () => {
    const count = (v: string) => get("cvd", v).device_count;
    for (const v of ["[0, 1]", "[0]", "0,0", "0, 0", "1,1", "0x,0", "(0)", "'0'", ""])
      assert.equal(count(v), 0, JSON.stringify(v));
    for (const v of ["0,1", "0 # c", "0,GPU-bogus", "0;1"]) assert.ok((count(v) ?? 0) >= 1, JSON.stringify(v));
  });

  const jaxMeasured = res.cases.some((c) => c.group === "jax-freeze");
  test(
    `${file}: JAX_INIT_FUNCTIONS members started the backend (jax ${res.environment.jax ?? "not measured"})`,
    { skip: !jaxMeasured && "no jax measurements in this file" },
    () => {
      for (const c of res.cases.filter(
        (x) => x.group === "jax-freeze" && x.case.startsWith("jax.") && !x.case.includes(".", 4),
      )) {
        const m = c.case.slice(4);
        assert.equal(
          c.frozen,
          JAX_INIT_FUNCTIONS.has(m),
          `jax.${m}: measured ${c.frozen ? "starting" : "not starting"} the backend`,
        );
      }
      assert.equal(get("jax-freeze", "import jax").frozen, false);
      assert.equal(get("jax-freeze", "jax.config.update").frozen, false);
    },
  );
}

test("the editor setting's default eager-init modules are the engine's (package.json gpuPilot.eagerInitModules)", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  assert.deepEqual(pkg.contributes.configuration.properties["gpuPilot.eagerInitModules"].default, [
    ...DEFAULT_EAGER_INIT_MODULES,
  ]);
});

test('results-frameworks-h100-imports.json: an NCCL process group freezes CUDA_VISIBLE_DEVICES but not the allocator, gloo neither (the model\'s init_process_group("nccl") at depth nvml)', () => {
  const res = JSON.parse(readFileSync(join(VERIFY, "results-frameworks-h100-imports.json"), "utf8")) as {
    cases: Array<{ case: string; frozen: boolean; allocator_configured_before_write: boolean }>;
  };
  const row = (id: string) => res.cases.find((c) => c.case === id)!;
  assert.deepEqual(
    [
      row("torch.distributed.init_process_group('nccl')").frozen,
      row("torch.distributed.init_process_group('nccl')").allocator_configured_before_write,
    ],
    [true, false],
  );
  assert.equal(freezes("torch", "nvml", "CUDA_VISIBLE_DEVICES"), true);
  assert.equal(freezes("torch", "nvml", "PYTORCH_CUDA_ALLOC_CONF"), false);
  assert.deepEqual(
    [
      row("torch.distributed.init_process_group('gloo')").frozen,
      row("torch.distributed.init_process_group('gloo')").allocator_configured_before_write,
    ],
    [false, false],
  );
  // PYTORCH_NO_CUDA_MEMORY_CACHING: open after a context, closed by the first allocation (depth alloc).
  const nc = JSON.parse(readFileSync(join(VERIFY, "results-nocache-h100.json"), "utf8")) as {
    cases: Array<{ case: string; caching_off: boolean }>;
  };
  const off = (id: string) => nc.cases.find((c) => c.case === id)!.caching_off;
  for (const p of [
    "before import torch",
    "after cuda.is_available",
    "after cuda.get_device_name",
    "after cuda.set_device",
    "after cuda.mem_get_info",
    "after cuda.synchronize",
  ])
    assert.equal(off(p), true, p);
  for (const p of ["after tensor", "after module.to(cuda)"]) assert.equal(off(p), false, p);
  assert.equal(freezes("torch", "context", "PYTORCH_NO_CUDA_MEMORY_CACHING"), false);
  assert.equal(freezes("torch", "alloc", "PYTORCH_NO_CUDA_MEMORY_CACHING"), true);
});
