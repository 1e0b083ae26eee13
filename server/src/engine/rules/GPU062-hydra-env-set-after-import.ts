import { basename } from "node:path";
import type { Pair } from "yaml";
import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { Range } from "../types";
import { ALLOC_CONF_VARIABLES, selectsAsyncAllocator, STARTUP_VARIABLES } from "../frameworks";
import { ModuleTrees } from "../python/moduleTrees";
import { buildModel } from "../python/model";
import { nodeRange } from "../python/events";
import { pythonInput } from "../python/parser";
import { DEFAULT_EAGER_INIT_MODULES } from "../frameworks";
import { catalogueEagerOf } from "../initCatalogue";
import { contentEnd, isScalar, pairStart, scalarText } from "../manifests/yaml";
import {
  configDirOf,
  entryModuleCandidates,
  envSetBlock,
  hydraMains,
  primaryConfigOf,
  relationOf,
  type ConfigRelation,
  type EnvSetBlock,
} from "../launch/hydra";
import { writeAtTaskStart, type TaskStartVerdict } from "./shared/taskStart";

const HYDRA = "facebookresearch/hydra@2c03d1b925fe239e0b67b923699d4027685f198f";

/** GPU062: a CUDA startup variable in `hydra.job.env_set`, applied when the task starts, after the entry module's imports. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU062",
    name: "hydra-env-set-after-import",
    severity: "information",
    fixable: false,
    // Reads a YAML file's `env_set` mapping (`hydra.job.env_set`, or `job.env_set` of a `hydra/`
    // group option) and reports its entries that name a startup variable: both are keys, so the
    // text holds `env_set` and the variable's name (manifests/prefilter.ts says why a substring
    // test is sound on YAML). Never a compose file.
    trigger: (text, kind) =>
      kind === "yaml" && text.includes("env_set") && STARTUP_VARIABLES.some((v) => text.includes(v)),
    docs: {
      what: "Finds a CUDA startup variable (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, `PYTORCH_CUDA_ALLOC_CONF`, ...) set under `hydra.job.env_set` in a Hydra config whose task function's module imports a framework or initialises CUDA at its top level. Hydra applies `env_set` only when it starts the task function, after the module's imports and whatever its top level ran, so the entry is judged exactly as a write of that variable as the first statement of the `@hydra.main(...)` function: GPU001's judgement (severity error: CUDA was already initialised, by a call or the import of a library that initialises it, the message names it; the entry has no effect) or GPU002's (severity information: a framework was imported, nothing initialised CUDA yet; in the default set only where a GPU library that is neither measured nor catalogued is imported between the framework import and the function, named in the message; with preview on, also where nothing unmeasured is in between). Silent where GPU001 and GPU002 would be silent for that write: nothing imported before the function (imports inside the task function), or a task function that starts a child process (which reads the variable itself). Reported on the entry's line in the YAML, with the initialising call or import and the `@hydra.main` line as related locations.",
      follows:
        "The config file's one YAML document: `hydra.job.env_set` of a config at the root package (no `# @package` header, or `_global_`/`_group_`), or `job.env_set` of an option of the `hydra` config group (a file in a `hydra/` folder of the config folder; no header, or `_group_`/`hydra`). The task functions: the module-level functions decorated with `@hydra.main(config_path=..., config_name=...)` (keywords or the first two arguments, string literals; `pkg://` paths are not followed) in the `.py` files that hold `hydra` and `main` and sit in the config folder, the folder above it, that folder's ancestors up to a folder holding `.git` (three levels at most) or their direct subfolders (the first 200 `.py` files, nearest folders first), whose config_path, joined to the file's folder, is the config's folder. A root config counts when config_name names it (with or without `.yaml`), when the primary config's `defaults:` list names it as a plain entry (`- base`), or, when no task names it either way, as a config of the task's config folder (chosen with `--config-name`); a `hydra` group option counts only when the primary config's `defaults:` list selects it (`hydra: NAME`, `override hydra: NAME`, with or without `/`). For each task, the module's code as GPU001 and GPU002 read it, with the init catalogue's entries for the project's library pins (its top level and `if __name__ == \"__main__\":` block up to the call of the task function, which Hydra's `@hydra.main` wrapper runs; for a task function the module never calls, its code above the definition). Not followed: other `defaults:` forms (config groups other than `hydra`, packages, interpolated or optional entries, nested defaults), command-line overrides (`+hydra.job.env_set.X=...`, `hydra=NAME`), `--config-dir` and the search path, `hydra.initialize`/`compose`, Structured Configs, the project modules the entry module imports (an import of one counts as initialising nothing here), values set to `null`, and `PYTORCH_CUDA_ALLOC_CONF` selecting `backend:cudaMallocAsync` (GPU026's case in Python).",
      why: `Hydra sets the variables of \`hydra.job.env_set\` only when it runs the task: hydra/core/utils.py \`run_job\` calls the task function inside \`with env_override(hydra_cfg.hydra.job.env_set):\`, and \`env_override\` does \`os.environ.update(env)\` (${HYDRA} hydra/core/utils.py:100, 173-176, 448-453; Hydra's documentation of hydra.job.env_set: "used to set the environment variables of the running job"). By then Python has run the entry module's top level: its \`import torch\`, and whatever it initialised. A startup variable set after CUDA initialised has no effect in the process (GPU001: measured on 2 x H200 with torch 2.11, \`CUDA_VISIBLE_DEVICES\` set after \`torch.cuda.is_available()\` leaves the program on physical GPU 0); one set after \`import torch\` still works today, but only while nothing imported before the task initialises CUDA (GPU002). huggingface/optimum-benchmark#27: \`env_set\` with \`CUDA_VISIBLE_DEVICES: 4,5\` left the model on GPUs 0 and 1; the maintainers traced it to torch being imported before the experiment started and moved the imports out of the entry point.`,
      example:
        '# conf/config.yaml, the config of app.py:\n#   import hydra\n#   import torch\n#   print(torch.cuda.is_available())\n#   @hydra.main(version_base=None, config_path="conf", config_name="config")\n#   def main(cfg): ...\nlr: 0.01\nhydra:\n  job:\n    env_set:\n      CUDA_VISIBLE_DEVICES: "1"  # GPU062: applied when main() starts, after is_available()\n',
      fix: "# conf/config.yaml, the config of app.py (started as `CUDA_VISIBLE_DEVICES=1 python app.py`,\n# or with `import torch` and the CUDA calls moved into main()):\nlr: 0.01\n",
      whenNotToCare:
        "A config that is never the primary config of a task whose module imports a framework (the rule assumes the config folder's configs are used by the tasks that name the folder). Also when the task function starts other processes that read the variable (handled where the function itself starts them; not when a library does it). Better in every case: set the variable in the launch environment (`CUDA_VISIBLE_DEVICES=1 python app.py`, GPU Pilot's run command), or import the framework inside the task function.",
      references: [
        `${HYDRA} hydra/core/utils.py:100 \`run_job\`; :173-176 \`with env_override(hydra_cfg.hydra.job.env_set): ... ret.return_value = task_function(task_cfg)\`; :448-453 \`env_override\`: \`os.environ.update(env)\``,
        `${HYDRA} hydra/main.py:47-53: config_path "Relative paths are interpreted relative to the declaring python file", config_name "usually the file name without the .yaml extension"; hydra/_internal/utils.py:128-136 \`compute_search_path_dir\`; hydra/plugins/config_source.py:114-124 \`_normalize_file_name\` (adds \`.yaml\`), :127-153 \`_get_header_dict\` (the \`# @package\` header)`,
        "Hydra documentation, 'Job Configuration', hydra.job.env_set (https://hydra.cc/docs/configure_hydra/job/): a Dict[str, str] used to set the environment variables of the running job; 'Overriding packages' (https://hydra.cc/docs/advanced/overriding_packages/): the default package of a config is its config group",
        "huggingface/optimum-benchmark#27 (2023-08-14): `hydra.job.env_set` `CUDA_VISIBLE_DEVICES: 4,5` had no effect, the model loaded on GPUs 0 and 1; fixed by moving the imports out of the entry point (optimum-benchmark #36, #37)",
        "GPU001 and GPU002's documentation: the judgement reused here, with its ground-truth rows and the init catalogue",
      ],
      language: "yaml",
    },
  },
  checkManifest(ctx) {
    if (ctx.manifest.kind !== "yaml" || !ctx.file) return;
    const block = envSetBlock(ctx.file, ctx.manifest.documents);
    const entries = block ? startupEntries(block) : [];
    if (!block || !entries.length) return;
    const tasks = tasksOf(ctx, block);
    for (const e of entries) {
      let best: { task: Task; verdict: TaskStartVerdict } | null = null;
      for (const task of tasks) {
        const verdict = task.main.verdicts.get(e.variable);
        if (verdict && (!best || rank(verdict) > rank(best.verdict))) best = { task, verdict };
      }
      if (best) report(ctx, e, best.task, best.verdict);
    }
  },
};

/** One `env_set` entry that names a startup variable. */
interface Entry {
  variable: string;
  value: string;
  /** The `K: V` pair's offsets in the text. */
  start: number;
  end: number;
}

/**
 * The entries of the block that write a startup variable: a scalar key among STARTUP_VARIABLES and
 * a value that is not null (Hydra would pass None to os.environ). `PYTORCH_CUDA_ALLOC_CONF` choosing
 * `backend:cudaMallocAsync` is left to GPU026's reading (in Python: it crashes, it does not "work
 * while nothing initialised CUDA").
 */
function startupEntries(block: EnvSetBlock): Entry[] {
  const out: Entry[] = [];
  for (const p of block.map.items as Pair[]) {
    const variable = isScalar(p.key) ? String(p.key.value) : null;
    const value = scalarText(p.value);
    if (variable === null || value === null || !STARTUP_VARIABLES.includes(variable)) continue;
    if (ALLOC_CONF_VARIABLES.includes(variable) && selectsAsyncAllocator(value)) continue;
    out.push({ variable, value, start: pairStart(p), end: contentEnd(p) });
  }
  return out;
}

/** A task function of an entry module whose config folder holds the linted config. */
interface Task {
  file: string;
  main: ModuleMain;
  relation: ConfigRelation;
}

/** What GPU062 keeps of one `@hydra.main` function of a module's text. */
interface ModuleMain {
  name: string;
  configPath: string;
  configName: string | null;
  decorator: Range;
  /** Per startup variable, the verdict on a write of it when the function starts (null: silent). */
  verdicts: Map<string, TaskStartVerdict | null>;
}

/**
 * The tasks that use the linted config: the `@hydra.main` functions of the Python files around its
 * config folder whose config_path names that folder, with how they use the config (launch/hydra.ts
 * `relationOf`); where some task names the config (config_name or its defaults list), only those.
 */
function tasksOf(ctx: ManifestRuleContext, block: EnvSetBlock): Task[] {
  const file = ctx.file!;
  const out: Task[] = [];
  for (const c of entryModuleCandidates(block.configDir, ctx.read)) {
    for (const main of mainsOf(c.text, c.file, ctx.libraryPins)) {
      const dir = configDirOf(c.file, main);
      if (dir !== block.configDir) continue;
      const relation = relationOf(block, file, primaryConfigOf(dir, main), (p) => ctx.read(p, 1024 * 1024));
      if (relation) out.push({ file: c.file, main, relation });
    }
  }
  const named = out.filter((t) => t.relation !== "folder");
  return named.length ? named : out;
}

const kept = new Map<string, ModuleMain[]>();

/**
 * The `@hydra.main` functions of a module's text with their verdicts for every startup variable
 * (rules/shared/taskStart.ts), from its parse and model; the last 16 texts' answers are kept (every
 * config of a folder asks about the same modules), per set of the project's library pins. Messages name
 * lines as `app.py line 9`.
 */
function mainsOf(text: string, file: string, pins: Readonly<Record<string, string>> = {}): ModuleMain[] {
  const key = `${basename(file)}\0${JSON.stringify(pins)}\0${text}`;
  const hit = kept.get(key);
  if (hit) return hit;
  let out: ModuleMain[] = [];
  const tree = ModuleTrees.parse(pythonInput(text), false);
  try {
    // The project's pins choose the init catalogue's entries (an accelerate 0.21 pin: its import
    // initialises CUDA), as for the project's Python files.
    const model = buildModel(tree, text, {
      eagerInitModules: catalogueEagerOf(pins) ?? DEFAULT_EAGER_INIT_MODULES,
      torchBelow24: false,
      libraryPins: pins,
    });
    const where = (row: number) => `${basename(file)} line ${row + 1}`;
    out = hydraMains(model).map((m) => ({
      name: m.name,
      configPath: m.configPath,
      configName: m.configName,
      decorator: nodeRange(m.decorator),
      verdicts: new Map(STARTUP_VARIABLES.map((v) => [v, writeAtTaskStart(model, m.def, m.name, v, where)])),
    }));
  } catch {
    out = [];
  } finally {
    tree.delete();
  }
  if (kept.size >= 16) kept.delete(kept.keys().next().value!);
  kept.set(key, out);
  return out;
}

/** GPU001's judgements before GPU002's, a default finding before a preview one. */
const rank = (v: TaskStartVerdict): number =>
  v.kind === "initialised" ? (v.severity === "error" ? 4 : 3) : v.preview ? 1 : 2;

function report(ctx: ManifestRuleContext, e: Entry, task: Task, v: TaskStartVerdict): void {
  const name = basename(task.file);
  const start = `\`${task.main.name}()\` (${name} line ${task.main.decorator.start.line + 1})`;
  const stays = e.variable === "CUDA_VISIBLE_DEVICES" ? " (the program stays on the GPUs it already saw)" : "";
  const what = v.why ?? `: it has no effect in this process${stays}`;
  const launch = `${e.variable}=${/^[\w,.:-]*$/.test(e.value) ? e.value : `'${e.value}'`} python ${name}`;
  const move = v.kind === "initialised" ? "what initialises CUDA" : "the imports";
  ctx.report({
    range: ctx.manifest.src.range(e.start, e.end),
    severity: v.severity,
    preview: v.preview,
    message: `${e.variable} is set by hydra.job.env_set, which Hydra applies only when it starts ${start}, ${v.after}${what}; set it in the launch environment (\`${launch}\`), or move ${move} into \`${task.main.name}()\``,
    related: [
      { range: v.range, message: v.related, file: task.file },
      { range: task.main.decorator, message: usedBy(task, ctx.file!), file: task.file },
    ],
  });
}

/** The related message at the `@hydra.main` line: how the task uses the config. */
function usedBy(task: Task, config: string): string {
  const name = basename(config);
  const how = {
    primary: `its primary config is ${name}`,
    default: `its primary config's defaults list includes ${name}`,
    folder: `${name} is in its config folder (chosen with --config-name)`,
  }[task.relation];
  return `Hydra sets hydra.job.env_set when it starts ${task.main.name}(); ${how}`;
}
