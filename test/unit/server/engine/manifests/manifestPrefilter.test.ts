/**
 * The YAML manifest prefilter (server/src/engine/manifests/prefilter.ts) is sound: on every YAML
 * manifest we have (rule fixtures, the fix-property corpus, the e2e workspace) and on spellings
 * built to hide a needle (escapes, line continuations, aliases, flow style, quoting), each rule that
 * reports with the prefilter off passes its trigger, and linting with the prefilter gives exactly the
 * same diagnostics as without it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, filesUnder } from "../../../support/helpers";
import { lintManifest, manifestKindOf } from "../../../../../server/src/engine/manifests/lintManifest";
import { hasNeedleEscape, manifestRuleMayFire as mayFire } from "../../../../../server/src/engine/manifests/prefilter";
import { RULES, ruleByCode } from "../../../../../server/src/engine/rules/index";
import { isManifestRule, isPythonRule } from "../../../../../server/src/engine/rule";
import type { ManifestKind } from "../../../../../server/src/engine/manifests/files";

const yamlFiles = (dir: string): string[] => filesUnder(dir, (n) => n.endsWith(".yaml") || n.endsWith(".yml"));

const FILES = [
  join(ROOT, "test", "fixtures"),
  join(ROOT, "test", "corpus"),
  join(ROOT, "test", "e2e", "workspace"),
  join(ROOT, "examples"),
].flatMap(yamlFiles);

/** Texts that write a needle other than as one run of source characters, each with a rule it must fire (with the prefilter off). */
const HIDDEN: Array<{ name: string; text: string; kind: "compose" | "yaml"; fires: string }> = [
  {
    name: "GPU018 \\/ escape",
    kind: "yaml",
    fires: "GPU018",
    text: 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: c\n      resources:\n        limits:\n          "nvidia.com\\/gpu": 0.5\n',
  },
  {
    name: "GPU018 \\x escape",
    kind: "yaml",
    fires: "GPU018",
    text: 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: c\n      resources:\n        limits:\n          "\\x6evidia.com/gpu": 0.5\n',
  },
  {
    name: "GPU018 \\u escape",
    kind: "yaml",
    fires: "GPU018",
    text: 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: c\n      resources:\n        requests:\n          "amd.com\\u002Fgpu": 1\n',
  },
  {
    name: "GPU018 line continuation",
    kind: "yaml",
    fires: "GPU018",
    text: 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: c\n      resources:\n        limits: {"nvidia.com/\\\n          gpu": 1.5}\n',
  },
  {
    name: "GPU019 \\U escape",
    kind: "yaml",
    fires: "GPU019",
    text: 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: c\n      env:\n        - name: "CUDA_\\U00000056ISIBLE_DEVICES"\n          value: "1"\n',
  },
  {
    name: "GPU019 compose, CRLF continuation",
    kind: "compose",
    fires: "GPU019",
    text: 'services:\r\n  a:\r\n    environment:\r\n      - "CUDA_VISIBLE_\\\r\n        DEVICES=2"\r\n',
  },
  {
    name: "GPU019 single-quoted, anchored",
    kind: "compose",
    fires: "GPU019",
    text: "services:\n  a:\n    environment: &e\n      - 'CUDA_VISIBLE_DEVICES=1'\n  b:\n    environment: *e\n",
  },
  {
    name: "GPU020 flow style",
    kind: "compose",
    fires: "GPU020",
    text: 'services: {a: {deploy: {resources: {reservations: {devices: [{count: 1, device_ids: ["0"]}]}}}}}\n',
  },
  {
    name: "GPU020 quoted keys",
    kind: "compose",
    fires: "GPU020",
    text: '"services":\n  a:\n    \'deploy\':\n      resources:\n        reservations:\n          "devices":\n            - driver: nvidia\n',
  },
];

const MANIFEST_RULES = RULES.filter(isManifestRule);

/** Whether the manifest rule `code` may fire on `text` (manifests/prefilter.ts `manifestRuleMayFire` with the registry's rule). */
function manifestRuleMayFire(code: string, text: string, kind: ManifestKind, escapes: () => boolean): boolean {
  const rule = ruleByCode(code);
  assert.ok(rule && isManifestRule(rule), `${code} is no manifest rule`);
  return mayFire(rule, text, kind, escapes);
}

test("every manifest rule has a YAML trigger in its meta, and every rule is a Python or a manifest rule, never both", () => {
  assert.deepEqual(
    MANIFEST_RULES.map((r) => r.meta.code),
    [
      "GPU018",
      "GPU019",
      "GPU020",
      "GPU021",
      "GPU022",
      "GPU023",
      "GPU024",
      "GPU025",
      "GPU040",
      "GPU042",
      "GPU043",
      "GPU045",
      "GPU052",
      "GPU054",
      "GPU055",
      "GPU059",
      "GPU060",
      "GPU062",
      "GPU066",
      "GPU067",
      "GPU071",
      "GPU072",
      "GPU076",
    ],
  );
  for (const rule of MANIFEST_RULES) assert.equal(typeof rule.meta.trigger, "function", rule.meta.code);
  for (const rule of RULES) assert.notEqual(isManifestRule(rule), isPythonRule(rule), rule.meta.code);
});

test(`YAML prefilter soundness on ${FILES.length} files and ${HIDDEN.length} hidden spellings: what fires passes its trigger, output unchanged`, () => {
  assert.ok(FILES.length >= 10, `only ${FILES.length} YAML files found`);
  const cases = [
    ...FILES.map((f) => ({
      name: f,
      text: readFileSync(f, "utf8"),
      kind: manifestKindOf(f) as "compose" | "yaml",
      fires: null as string | null,
    })),
    ...HIDDEN,
  ];
  let fired = 0;
  for (const c of cases) {
    assert.ok(c.kind === "compose" || c.kind === "yaml", `${c.name}: ${c.kind}`);
    for (const preview of [false, true]) {
      const full = lintManifest(c.text, c.kind, { noPrefilter: true, preview });
      const escapes = hasNeedleEscape(c.text);
      for (const d of full.diagnostics)
        assert.ok(
          manifestRuleMayFire(d.code, c.text, c.kind, () => escapes),
          `${c.name}: ${d.code} fired but the prefilter would skip it`,
        );
      if (c.fires)
        assert.ok(
          full.diagnostics.some((d) => d.code === c.fires),
          `${c.name}: ${c.fires} should fire (got ${full.diagnostics.map((d) => d.code).join(", ") || "none"})`,
        );
      assert.deepEqual(
        lintManifest(c.text, c.kind, { preview }).diagnostics,
        full.diagnostics,
        `${c.name}${preview ? " (preview)" : ""}`,
      );
      fired += full.diagnostics.length;
    }
  }
  assert.ok(fired > 40, `only ${fired} diagnostics`);
});

test("the escapes that can write a needle character are found; the others are not", () => {
  for (const t of ['"a\\/b"', '"\\x41"', '"\\u0041"', '"\\U00000041"', '"a\\\nb"', '"a\\\r\nb"'])
    assert.equal(hasNeedleEscape(t), true, t);
  // native_functions.yaml's only backslashes: \" \\ \' in a plain scalar.
  for (const t of ["- func: f(str a=\"\\\"'\\\\\", str b='\"\\'\\\\') -> Tensor", '"tab\\there"', '"nul\\0"', "plain"])
    assert.equal(hasNeedleEscape(t), false, t);
});

test("a YAML file without any trigger is not parsed, and a Dockerfile or job script is never skipped by it", () => {
  const big = "- func: add(Tensor self) -> Tensor\n  variants: function, method\n".repeat(2000);
  assert.equal(
    manifestRuleMayFire("GPU018", big, "yaml", () => hasNeedleEscape(big)),
    false,
  );
  assert.equal(
    manifestRuleMayFire("GPU019", big, "yaml", () => hasNeedleEscape(big)),
    false,
  );
  assert.equal(
    manifestRuleMayFire("GPU020", big, "compose", () => hasNeedleEscape(big)),
    false,
  );
  assert.deepEqual(lintManifest(big, "yaml").diagnostics, []);
  assert.equal(
    manifestRuleMayFire("GPU019", "FROM x\n", "dockerfile", () => false),
    true,
  );
  assert.equal(
    manifestRuleMayFire("GPU021", "#SBATCH --gpus=1\n", "jobscript", () => false),
    true,
  );
  // The trigger is the rule's own: GPU018 reads pod containers of YAML, not compose services.
  assert.equal(
    manifestRuleMayFire("GPU018", "services: {a: {x: nvidia.com/gpu}}", "compose", () => false),
    false,
  );
  assert.equal(
    manifestRuleMayFire("GPU020", "services: {a: {deploy: {devices: []}}}", "yaml", () => false),
    false,
  );
});
