import assert from "node:assert/strict";
import { test } from "node:test";
import { lint, lintCode, applyFix } from "../support/helpers";
import { initEngine } from "../../../server/src/engine/lint";
import { lintNotebook } from "../../../server/src/engine/notebook";
import { fixtureTests } from "./fixtureCheck";
import {
  editDistance,
  misspellingOf,
  REAL_VARIABLES,
} from "../../../server/src/engine/rules/GPU007-misspelled-cuda-variable";
import { STARTUP_VARIABLES } from "../../../server/src/engine/frameworks";

fixtureTests("GPU007");

const C08 = 'import os\n\nos.environ["CUDA_VISIBLE_DEVICE"] = "0"\nimport torch\n';

test("GPU007 is a warning on the write that names the right variable", async () => {
  const [d] = await lintCode(C08, "GPU007");
  assert.deepEqual(d.range, { start: { line: 2, character: 0 }, end: { line: 2, character: 39 } });
  assert.equal(d.severity, "warning");
  assert.match(d.message, /"CUDA_VISIBLE_DEVICE" is not a variable/);
  assert.match(d.message, /did you mean CUDA_VISIBLE_DEVICES\?/);
  assert.match(d.message, /every GPU stays visible/);
});

test("GPU007 fix renames inside the quotes; re-linting offers no GPU007 again", async () => {
  const [d] = await lintCode(C08, "GPU007");
  assert.equal(d.fix?.title, "Rename to CUDA_VISIBLE_DEVICES");
  assert.equal(d.fix?.safe, false, "the rename changes what the program does: offered, not applied on save");
  const fixed = applyFix(C08, d);
  assert.equal(fixed, 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nimport torch\n');
  // Now the variable takes effect; only GPU006's information about the device order remains, in preview.
  assert.deepEqual(
    (await lint(fixed)).map((x) => x.code),
    [],
  );
  assert.deepEqual(
    (await lint(fixed, { preview: true })).map((x) => x.code),
    ["GPU006"],
  );
});

test("GPU007 on a read sits on the read expression; update(K=...) is renamed in the keyword", async () => {
  const src = "import os\ng = os.environ['CUDA_VISIBLE_DEVICE']\nos.environ.update(CUDA_DEVICE_ORDR='PCI_BUS_ID')\n";
  const [read, write] = await lintCode(src, "GPU007");
  assert.deepEqual(read.range, { start: { line: 1, character: 4 }, end: { line: 1, character: 37 } });
  assert.match(read.message, /This read never sees the real setting/);
  assert.equal(
    applyFix(src, read),
    "import os\ng = os.environ['CUDA_VISIBLE_DEVICES']\nos.environ.update(CUDA_DEVICE_ORDR='PCI_BUS_ID')\n",
  );
  assert.match(write.message, /did you mean CUDA_DEVICE_ORDER\?/);
  assert.equal(
    applyFix(src, write),
    "import os\ng = os.environ['CUDA_VISIBLE_DEVICE']\nos.environ.update(CUDA_DEVICE_ORDER='PCI_BUS_ID')\n",
  );
});

test("editDistance and misspellingOf", () => {
  assert.equal(editDistance("CUDA_VISIBLE_DEVICE", "CUDA_VISIBLE_DEVICES"), 1);
  assert.equal(editDistance("kitten", "sitting"), 3);
  assert.equal(editDistance("abc", "abc"), 0);
  assert.equal(misspellingOf("CUDA_VISIBLE_DEVICES"), null);
  assert.equal(misspellingOf("XLA_PYTHON_CLIENT_MEM_FRACTON"), "XLA_PYTHON_CLIENT_MEM_FRACTION");
  assert.equal(misspellingOf("CUDA_AVAILABLE_DEVICES"), "CUDA_VISIBLE_DEVICES");
  for (const v of STARTUP_VARIABLES) assert.equal(misspellingOf(v), null, v);
  for (const v of REAL_VARIABLES) assert.equal(misspellingOf(v), null, v);
  for (const v of [
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_LAUNCH_BLOCKING",
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_DISABLE",
    "CUDA_MEMORY_LIMIT",
    "CUDA_DEVICE",
    "MY_SETTING",
    "CUDA_VISIBL",
    "PYTORCH_CUDA",
  ]) {
    assert.equal(misspellingOf(v), null, v);
  }
  // A name cut short (mmagic#1580: `CUDA_VISIBLE=0 python tools/train.py`): a strict prefix of at
  // least 12 characters; shorter prefixes (`CUDA_DEVICE`, a common own name) stay silent.
  assert.equal(misspellingOf("CUDA_VISIBLE"), "CUDA_VISIBLE_DEVICES");
  assert.equal(misspellingOf("CUDA_VISIBLE_DEV"), "CUDA_VISIBLE_DEVICES");
  assert.equal(misspellingOf("PYTORCH_CUDA_ALLOC"), "PYTORCH_CUDA_ALLOC_CONF");
  assert.equal(misspellingOf("cuda_visible"), "CUDA_VISIBLE_DEVICES");
});

/** The whole Levenshtein table, as a reference for editDistance's band. */
function fullDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

test("editDistance with a bound is exact up to the bound and above it beyond (issue 20: the banded table)", () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const word = () => {
    let s = "";
    const n = rand(9);
    for (let i = 0; i < n; i++) s += "ABC_"[rand(4)];
    return s;
  };
  let exact = 0,
    above = 0;
  for (let k = 0; k < 20000; k++) {
    const a = word(),
      b = k % 3 === 0 ? a.slice(0, rand(a.length + 1)) + "AB".slice(0, rand(3)) + a.slice(rand(a.length + 1)) : word();
    const max = rand(4),
      d = fullDistance(a, b),
      got = editDistance(a, b, max);
    if (d <= max) {
      assert.equal(got, d, `${a} ${b} max ${max}`);
      exact++;
    } else {
      assert.ok(got > max, `${a} ${b} max ${max}: ${got}`);
      above++;
    }
    assert.equal(editDistance(a, b), d, `${a} ${b} unbounded`);
  }
  assert.ok(exact > 2000 && above > 2000, `${exact} exact, ${above} above`);
  // Paths along the band's edge: `max` insertions or deletions at one end.
  for (let k = 0; k < 300; k++) {
    const a = word() + "ABC",
      max = 1 + rand(3),
      z = "Z".repeat(max);
    for (const b of [z + a, a + z, a.slice(max), a.slice(0, a.length - max), z + a.slice(max)]) {
      const d = fullDistance(a, b),
        got = editDistance(a, b, max);
      if (d <= max) assert.equal(got, d, `${a} ${b} max ${max}`);
      else assert.ok(got > max, `${a} ${b} max ${max}: ${got}`);
    }
  }
  // Rows grow for a long second word, and shrink back to a short one correctly.
  assert.equal(editDistance("X".repeat(100), "X".repeat(99) + "Y", 2), 1);
  assert.equal(editDistance("AB", "BA", 2), 2);
});

test("GPU007 in a notebook shell line is reported without a fix (the line is not Python)", async () => {
  await initEngine();
  const { diagnostics } = lintNotebook([{ kind: "code", text: "!export CUDA_VISIBLE_DEVICE=1" }]);
  const d = diagnostics.find((x) => x.code === "GPU007");
  assert.ok(d);
  assert.equal(d.fix, undefined);
  assert.equal(diagnostics.filter((x) => x.code === "GPU014").length, 0, "GPU014 is about the real names");
});

test("GPU007 knows the other vendors' device variables and Ray's switch: no finding on the real names", async () => {
  const names = [
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
    "ZE_FLAT_DEVICE_HIERARCHY",
    "PYTORCH_ENABLE_MPS_FALLBACK",
    "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES",
  ];
  const src =
    "import os\n" +
    names.map((n) => `os.environ["${n}"] = "1"\nv = os.environ.get("${n}")\n`).join("") +
    "import torch\n";
  const all = await lint(src, { preview: true });
  assert.deepEqual(
    all.filter((d) => d.code === "GPU007" || d.code === "GPU016"),
    [],
  );
});

test("GPU007 reports a name one edit from a vendor variable, with the rename fix", async () => {
  const [d] = await lintCode('import os\nos.environ["ROCR_VISIBLE_DEVICE"] = "0"\n', "GPU007");
  assert.match(d.message, /did you mean ROCR_VISIBLE_DEVICES\?/);
  assert.equal(d.fix?.edits[0].newText, "ROCR_VISIBLE_DEVICES");
  const [m] = await lintCode('import os\nos.environ["PYTORCH_ENABLE_MPS_FALLBAK"] = "1"\n', "GPU007");
  assert.match(m.message, /did you mean PYTORCH_ENABLE_MPS_FALLBACK\?/);
});

test("GPU007 reads a misspelled name through every read form: os.getenv under an alias or in parentheses, .get and .pop on an alias of os.environ", async () => {
  const code = [
    "import os",
    "from os import getenv as ge",
    "env = os.environ",
    'a = ge("CUDA_VISIBLE_DEVICE")',
    'b = (os.getenv)("CUDA_VISIBLE_DEVICE")',
    'c = env.pop("CUDA_VISIBLE_DEVICE", None)',
    'd = os.environ.get("CUDA_VISIBLE_DEVICE")',
    'e = {"CUDA_VISIBLE_DEVICE": 1}.get("CUDA_VISIBLE_DEVICE")',
    "",
  ].join("\n");
  assert.deepEqual(
    (await lintCode(code, "GPU007")).map((d) => d.range.start.line),
    [3, 4, 5, 6],
  );
});
