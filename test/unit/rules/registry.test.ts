/**
 * The rule registry's contract (after ESLint's build check): every registered rule has its doc
 * sections, a test file, fixtures that fire and fixtures that do not, and an up-to-date generated
 * doc page; codes are unique and in order, file names start with the code, and names match the
 * list in test/rule-names.json (the contract's names). Only registered rules are checked.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, lint, expectedLines, fixtureFiles, applyFix } from "../support/helpers";
import { RULES } from "../../../server/src/engine/rules/index";
import { initEngine } from "../../../server/src/engine/lint";
import { cellsOfIpynb, lintNotebook } from "../../../server/src/engine/notebook";
import { languageOf, renderRuleDoc, renderRulesIndex } from "../../../server/src/ruleDocs";
import type { LintDiagnostic } from "../../../server/src/engine/types";
import { lintManifest } from "../../../server/src/engine/manifests/lintManifest";
import type { ManifestKind } from "../../../server/src/engine/manifests/files";
import { DISTRIBUTED_LAUNCH, SRUN_ONE_GPU_PER_TASK } from "../support/slurmLaunches";
import { CHILD_PROJECT } from "../support/childProject";

/** Rules that read how a job script starts the file (LintOptions.slurm). */
const SLURM_STARTED = new Set(["GPU036", "GPU037", "GPU063"]);

const RULES_DIR = join(ROOT, "server", "src", "engine", "rules");
const DOCS_DIR = join(ROOT, "docs", "rules");
const FIXTURES_DIR = join(ROOT, "test", "fixtures", "rules");
const TESTS_DIR = join(ROOT, "test", "unit", "rules");

/** code → name from test/rule-names.json (the contract's names; .ci/run checks it against ../shared/spec/rules.md). */
function specTable(): Map<string, string> {
  const json = JSON.parse(readFileSync(join(ROOT, "test", "rule-names.json"), "utf8")) as Record<string, string>;
  return new Map(Object.entries(json).filter(([code]) => /^GPU\d{3}$/.test(code)));
}

test("rule-names.json lists the contract's 20 rules, GPU001 to GPU020, then this project's own, without gaps", () => {
  const table = specTable();
  const codes = [...table.keys()];
  assert.ok(codes.length >= 20, `only ${codes.length} codes`);
  // GPU001-GPU030 without gaps; later codes come in ranges given to work done in parallel (issue 23:
  // GPU036-GPU039 for the Slurm Python rules), so a range may start before the one below it is used.
  const first = codes.filter((c) => Number(c.slice(3)) <= 30);
  assert.deepEqual(
    first,
    Array.from({ length: 30 }, (_, i) => `GPU${String(i + 1).padStart(3, "0")}`),
  );
  assert.deepEqual(codes, [...codes].sort(), "codes ascending");
  assert.equal(table.get("GPU001"), "env-after-cuda-init");
  assert.equal(table.get("GPU020"), "compose-gpu-reservation");
});

test("every registered rule is in rule-names.json", () => {
  const table = specTable();
  assert.deepEqual(
    RULES.map((r) => r.meta.code).filter((c) => !table.has(c)),
    [],
  );
});

test("codes are unique and in ascending order", () => {
  const codes = RULES.map((r) => r.meta.code);
  assert.equal(new Set(codes).size, codes.length, `duplicate codes: ${codes.join(", ")}`);
  assert.deepEqual(codes, [...codes].sort(), "RULES must be in code order");
});

for (const rule of RULES) {
  const { code, name } = rule.meta;

  test(`${code}: name and file match rule-names.json`, () => {
    assert.equal(name, specTable().get(code), `${code}'s name differs from test/rule-names.json`);
    const files = readdirSync(RULES_DIR).filter((f) => f.startsWith(`${code}-`));
    assert.deepEqual(files, [`${code}-${name}.ts`], `one rule file named ${code}-${name}.ts`);
    assert.ok(["error", "warning", "information", "hint"].includes(rule.meta.severity));
  });

  test(`${code}: every doc section is written`, () => {
    const d = rule.meta.docs;
    for (const key of ["what", "follows", "why", "example", "fix", "whenNotToCare"] as const) {
      assert.equal(typeof d[key], "string", `${code} docs.${key}`);
      assert.ok(d[key].trim().length >= 20, `${code} docs.${key} is empty or a stub`);
    }
    assert.ok(Array.isArray(d.references) && d.references.length > 0, `${code} docs.references`);
    for (const r of d.references) assert.ok(r.trim().length > 0, `${code}: an empty reference`);
  });

  test(`${code}: the doc example fires the rule and the doc fix does not`, async () => {
    const language = languageOf(rule);
    const codes = async (text: string) =>
      (language === "python" ? await lintExample(text, code) : manifestCodes(text, language, code)).filter(
        (c) => c === code,
      );
    assert.ok((await codes(rule.meta.docs.example)).length > 0, `${code}'s example does not trigger it`);
    assert.deepEqual(await codes(rule.meta.docs.fix), [], `${code}'s fixed example still triggers it`);
  });

  test(`${code}: has a test file that runs its fixtures`, () => {
    const file = join(TESTS_DIR, `${code}.test.ts`);
    assert.ok(existsSync(file), `missing test/unit/rules/${code}.test.ts`);
    const text = readFileSync(file, "utf8");
    assert.ok(
      new RegExp(`[fF]ixture\\w*\\(\\s*"${code}"`).test(text),
      `${code}.test.ts does not run its fixtures (fixtureTests("${code}"))`,
    );
    if (rule.meta.fixable)
      assert.ok(
        /applyFix\(|applyEdits\(|applyManifestFix\(/.test(text),
        `${code} is fixable but its test applies no fix`,
      );
  });

  test(`${code}: has a snapshot of what the user sees on its fixtures, beside them`, () => {
    const file = join(FIXTURES_DIR, code, `${code}.snap`);
    assert.ok(
      existsSync(file),
      `missing test/fixtures/rules/${code}/${code}.snap (UPDATE_SNAPSHOTS=1 node --import tsx --test test/unit/rules/${code}.test.ts writes it)`,
    );
    const text = readFileSync(file, "utf8");
    assert.ok(text.startsWith(`# ${code}: what the user sees`), `${code}.snap has no header`);
    assert.ok(text.includes(`\n${code} `), `${code}.snap records no finding of ${code}`);
  });

  test(`${code}: its fixSafety matches the fixes its snapshot shows`, () => {
    const snap = readFileSync(join(FIXTURES_DIR, code, `${code}.snap`), "utf8");
    const shown = { safe: snap.includes("\n  fix (safe): "), unsafe: snap.includes("\n  fix (unsafe): ") };
    if (!rule.meta.fixable) {
      assert.equal(rule.meta.fixSafety, undefined, `${code} is not fixable but declares fixSafety`);
      assert.deepEqual(shown, { safe: false, unsafe: false }, `${code} is not fixable but its snapshot shows a fix`);
      return;
    }
    const declared = rule.meta.fixSafety;
    assert.ok(declared, `${code} is fixable but declares no fixSafety ("safe", "unsafe" or "both")`);
    assert.ok(shown.safe || shown.unsafe, `${code} is fixable but its snapshot shows no fix`);
    if (declared === "safe")
      assert.ok(!shown.unsafe, `${code} declares safe fixes only, but its snapshot shows an unsafe one`);
    if (declared === "unsafe")
      assert.ok(!shown.safe, `${code} declares unsafe fixes only, but its snapshot shows a safe one`);
  });

  test(`${code}: has fixtures that fire and fixtures that must not`, () => {
    const dir = join(FIXTURES_DIR, code);
    assert.ok(existsSync(dir), `missing test/fixtures/rules/${code}/`);
    const files = readdirSync(dir, { withFileTypes: true })
      .filter((f) => f.isFile() && !f.name.endsWith(".snap"))
      .map((f) => f.name);
    const fires = (f: string) => {
      const text = readFileSync(join(dir, f), "utf8");
      const sources = f.endsWith(".ipynb")
        ? cellsOfIpynb(text)
            .filter((c) => c.kind === "code")
            .map((c) => c.text)
        : [text];
      return sources.some((t) => expectedLines(t, code).length > 0);
    };
    assert.ok(files.some(fires), `${code}: no fixture annotated "# expect: ${code}"`);
    assert.ok(
      files.some((f) => !fires(f)),
      `${code}: no fixture on which it must stay silent`,
    );
  });

  test(`${code}: every fix in its fixtures parses, and re-linting does not offer it again`, async () => {
    // "Again" = as many findings with this message and fix title as before (others may be identical twins elsewhere).
    const same = (ds: LintDiagnostic[], d: LintDiagnostic) =>
      ds.filter((x) => x.code === code && x.fix?.title === d.fix!.title && x.message === d.message).length;
    for (const f of existsSync(join(FIXTURES_DIR, code)) ? fixtureFiles(code) : []) {
      const before = await lint(f.text);
      for (const d of before.filter((x) => x.code === code && x.fix)) {
        const after = await lint(applyFix(f.text, d));
        assert.ok(
          same(after, d) < same(before, d),
          `${f.name}:${d.range.start.line + 1} "${d.fix!.title}" is offered again after applying it`,
        );
      }
    }
  });

  test(`${code}: the committed doc page is the generator's output`, () => {
    const file = join(DOCS_DIR, `${code}.md`);
    assert.ok(existsSync(file), `missing docs/rules/${code}.md (run npm run docs:rules)`);
    assert.equal(
      readFileSync(file, "utf8"),
      renderRuleDoc(rule),
      `docs/rules/${code}.md is out of date (run npm run docs:rules)`,
    );
  });
}

test("docs/rules/README.md indexes exactly the registered rules", () => {
  const file = join(DOCS_DIR, "README.md");
  assert.ok(existsSync(file), "missing docs/rules/README.md (run npm run docs:rules)");
  assert.equal(
    readFileSync(file, "utf8"),
    renderRulesIndex(RULES),
    "docs/rules/README.md is out of date (run npm run docs:rules)",
  );
});

/**
 * The codes reported for a doc example: as a notebook cell when it has IPython lines (`!`, `%`),
 * with a two-GPU machine so that machine-aware rules can speak.
 */
/** A manifest example's codes: a Dockerfile, a Slurm job script, or YAML linted both as Kubernetes and as compose (preview on). */
/**
 * A project folder for the manifest examples: a shell example is linted as `example.sh` in it,
 * beside the `train.py` the examples launch (GPU042 and GPU052 read the script a launch line names).
 */
const EXAMPLE_DIR = (() => {
  const dir = mkdtempSync(join(tmpdir(), "gp-examples-"));
  // GPU052's example passes `--gpu 2`, which this script hands to CUDA.
  writeFileSync(
    join(dir, "train.py"),
    'import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument("--gpu", type=int, default=0)\nargs = p.parse_args()\ntorch.cuda.set_device(args.gpu)\n',
  );
  // GPU062's example is conf/config.yaml, the config of this task module (the example's comment).
  mkdirSync(join(dir, "conf"));
  writeFileSync(
    join(dir, "app.py"),
    'import hydra\nimport torch\nprint(torch.cuda.is_available())\n\n\n@hydra.main(version_base=None, config_path="conf", config_name="config")\ndef main(cfg):\n    print(cfg.lr)\n\n\nif __name__ == "__main__":\n    main()\n',
  );
  // GPU076's example is local.env, the env_file of this settings class (the example's comment), in
  // a project of its own (`.git`: GPU076 reads the project's files for what may export the file).
  mkdirSync(join(dir, "gpu076", "tabled"), { recursive: true });
  mkdirSync(join(dir, "gpu076", ".git"));
  writeFileSync(
    join(dir, "gpu076", "tabled", "settings.py"),
    'from typing import Optional\nfrom dotenv import find_dotenv\nfrom pydantic_settings import BaseSettings\n\n\nclass Settings(BaseSettings):\n    TORCH_DEVICE: Optional[str] = None\n\n    class Config:\n        env_file = find_dotenv("local.env")\n        extra = "ignore"\n',
  );
  return dir;
})();

function manifestCodes(text: string, language: string, code: string): string[] {
  const kinds: ManifestKind[] =
    language === "dockerfile"
      ? ["dockerfile"]
      : language === "bash"
        ? ["jobscript"]
        : language === "jsonc"
          ? ["devcontainer"]
          : language === "dotenv"
            ? ["dotenv"]
            : ["yaml", "compose"];
  // GPU045 compares ids with the machine its example names (one GPU).
  const machine = code === "GPU045" ? { machine: { gpuCount: 1, uuids: [] } } : {};
  return kinds.flatMap((k) =>
    lintManifest(
      text,
      k,
      { preview: true, ...machine },
      k === "jobscript"
        ? { file: join(EXAMPLE_DIR, "example.sh") }
        : code === "GPU062"
          ? { file: join(EXAMPLE_DIR, "conf", k === "compose" ? "compose.yaml" : "config.yaml") }
          : k === "dotenv"
            ? { file: join(EXAMPLE_DIR, "gpu076", "local.env") }
            : {},
    ).diagnostics.map((d) => d.code),
  );
}

async function lintExample(text: string, code: string): Promise<string[]> {
  const machine = { gpuCount: 2, uuids: [] };
  // The rules about files that a Slurm job script starts get the launch their example's first
  // comment describes (`srun python`, --ntasks-per-node=4, --gpus-per-task=1).
  if (SLURM_STARTED.has(code))
    return (await lint(text, { machine, preview: true, slurm: [SRUN_ONE_GPU_PER_TASK] })).map((d) => d.code);
  // GPU064's example is started by a shell script with CUDA_VISIBLE_DEVICES=1 (its first comment).
  if (code === "GPU064")
    return (
      await lint(text, {
        machine,
        preview: true,
        visibleLaunches: [{ script: "/p/separate_both.sh", line: 0, value: "1", from: "on the command" }],
      })
    ).map((d) => d.code);
  // GPU044's example is started by `python -m torch.distributed.launch` (its first comment).
  if (code === "GPU044")
    return (await lint(text, { machine, preview: true, slurm: [DISTRIBUTED_LAUNCH] })).map((d) => d.code);
  // GPU075's example starts `bench.worker`, a project module on the default device (support/childProject.ts).
  if (code === "GPU075")
    return (await lint(text, { machine, preview: true, project: CHILD_PROJECT })).map((d) => d.code);
  // GPU050's example is a saved notebook: cells start at `# cell N, In [k]` comments, k its execution count.
  if (code === "GPU050") {
    await initEngine();
    const cells = text
      .split(/^(?=# cell \d+)/m)
      .filter((c) => c.trim())
      .map((c) => {
        const count = /^# cell \d+, In \[(\d+)\]/.exec(c);
        return { kind: "code" as const, text: c, ...(count ? { executionCount: Number(count[1]) } : {}) };
      });
    return lintNotebook(cells, { machine, preview: true }).diagnostics.map((d) => d.code);
  }
  if (text.split("\n").some((l) => /^\s*[!%]/.test(l))) {
    await initEngine();
    return lintNotebook([{ kind: "code", text }], { machine, preview: true }).diagnostics.map((d) => d.code);
  }
  // Preview on: a preview rule's example documents it too.
  return (await lint(text, { machine, preview: true })).map((d) => d.code);
}

test("the README's opening counts the registered rules and names their range", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const m = /(\d+) rules,\s+\[GPU001 to (GPU\d{3})\]\(#rules\)/.exec(readme);
  assert.ok(m, "README's opening names the rules as `N rules, [GPU001 to GPUnnn](#rules)`");
  const codes = RULES.map((r) => r.meta.code).sort();
  assert.equal(Number(m[1]), codes.length);
  assert.equal(m[2], codes[codes.length - 1]);
});
