import type { ManifestRule, ManifestRuleContext } from "../rule";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import type { ScriptOption } from "../launch/script";
import { resolveLiteral } from "../manifests/jobscript";
import { parseLaunchLine, type LaunchLine } from "../launch/commandLine";
import { literalsWithSourced, visibleForCommand } from "../launch/sources";
import {
  assignedAttributes,
  importedModule,
  launchedScript,
  launchedScriptFacts,
  type LaunchedScriptFacts,
} from "../launch/script";
import { hasSbatchLine } from "../manifests/prefilter";
import { parseVisibleDevices } from "../visibleDevices";
import { cudaDeviceOrdinal } from "../frameworks";
import { wordsRange } from "./shared/jobScript";
import { hydraLightningDevices, hydraOverride } from "../launch/lightningDevices";

/** One device-ordinal option given on a command line: the option, its value's words and the ordinal. */
interface GivenOrdinal {
  option: string;
  dest: string;
  ordinal: number;
  start: ShellWord;
  end: ShellWord;
}

/**
 * The options of `args` (the launched script's arguments, up to `--`) that fill a destination the
 * script uses as a device ordinal, with a literal value that names one (`7`, or `cuda:7` where the
 * script does not build the string itself). The last one given for a destination wins, as in argparse.
 */
function givenOrdinals(
  args: readonly ShellWord[],
  facts: LaunchedScriptFacts,
  literals: Map<string, string>,
): GivenOrdinal[] {
  const byDest = new Map<string, GivenOrdinal | null>();
  for (let k = 0; k < args.length && args[k].value !== "--"; k++) {
    const w = args[k].value;
    const eq = w.startsWith("--") ? w.indexOf("=") : -1;
    const option = eq > 0 ? w.slice(0, eq) : w;
    const o = facts.options.get(option);
    if (!o) continue;
    const valueWord = eq > 0 ? args[k] : args[k + 1];
    if (eq < 0) k++;
    const use = facts.deviceDests.get(o.dest);
    if (!use || o.notSingle || !valueWord) continue;
    const raw = eq > 0 ? w.slice(eq + 1) : valueWord.value;
    const value = resolveLiteral(raw, literals);
    const ordinal =
      value === null
        ? null
        : /^[0-9]{1,4}$/.test(value)
          ? Number(value)
          : use.inString
            ? null
            : cudaDeviceOrdinal(value);
    byDest.set(
      o.dest,
      ordinal === null || ordinal < 0
        ? null
        : { option, dest: o.dest, ordinal, start: args[k - (eq < 0 ? 1 : 0)], end: valueWord },
    );
  }
  return [...byDest.values()].filter((g): g is GivenOrdinal => g !== null);
}

/**
 * `facts` without the destinations that a module the script hands its namespace to may set: each
 * imported callable's module, found beside the script ({@link importedModule}), is read for the
 * attributes it assigns ({@link assignedAttributes}); null (silent) when one is not found there or
 * may set any attribute. Not followed further: where that module hands the namespace on.
 */
function keptDests(facts: LaunchedScriptFacts, script: string, ctx: ManifestRuleContext): LaunchedScriptFacts | null {
  if (!facts.handedTo.length || !facts.deviceDests.size) return facts;
  const deviceDests = new Map(facts.deviceDests);
  for (const callee of facts.handedTo) {
    const module = importedModule(script, callee, ctx.read);
    const assigned = module === null ? null : assignedAttributes(module.text);
    if (!assigned || assigned.dynamic) return null;
    for (const name of assigned.names) deviceDests.delete(name);
  }
  return { ...facts, deviceDests };
}

/**
 * The facts of a launched script whose options are declared in modules it imports from beside it:
 * their `add_argument` options (an option declared with two destinations there is left out), and
 * the script read again with their functions that return a namespace known as such (`from getArgs
 * import get_args` with `def get_args(): ... return parser.parse_args()`). An option the command
 * gives is one that the parser behind the namespace accepts (argparse exits on any other: "error:
 * unrecognized arguments"), so where the script does not declare it, the imported modules do. Read
 * only when the command gives an option the script itself does not declare, and only the imported
 * modules that call `add_argument`.
 */
function withImportedParsers(
  facts: LaunchedScriptFacts,
  launched: { path: string; text: string },
  args: readonly ShellWord[],
  ctx: ManifestRuleContext,
): LaunchedScriptFacts {
  const unknown = args.some((w) => w.value.startsWith("--") && !facts.options.has(w.value.replace(/=.*$/s, "")));
  if (!unknown) return facts;
  const parsers = new Set<string>();
  const imported = new Map<string, ScriptOption | null>();
  for (const dotted of facts.imports) {
    const module = importedModule(launched.path, dotted, ctx.read);
    if (!module || module.rest.length > 1 || !module.text.includes("add_argument")) continue;
    const own = launchedScriptFacts(module.text);
    for (const name of own.returning)
      if (module.rest.length === 0) parsers.add(`${dotted}.${name}`);
      else if (module.rest[0] === name) parsers.add(dotted);
    for (const [k, o] of own.options) {
      const had = imported.get(k);
      imported.set(k, had === undefined || (had && had.dest === o.dest) ? o : null);
    }
  }
  const options = new Map(facts.options);
  for (const [k, o] of imported) if (o && !options.has(k)) options.set(k, o);
  if (options.size === facts.options.size) return facts;
  return { ...(parsers.size ? launchedScriptFacts(launched.text, parsers) : facts), options };
}

/** What the started Python can see: the visible devices in force for the command, else the machine's GPUs; null when neither is known. */
function visibleTo(
  ctx: ManifestRuleContext,
  c: ShellCommand,
  line: LaunchLine,
): { count: number; why: string; ids: number[] } | null {
  const { visible, unknown } = visibleForCommand(ctx.manifest, c, line);
  if (visible?.value != null) {
    const p = parseVisibleDevices(visible.value);
    // An empty, stopped or repeated list is GPU003's and GPU045's to report.
    if (p.hidesAll || p.stop || p.duplicate || !p.kept.length) return null;
    // On a known machine CUDA stops at the first id it lacks (ground-truth.md, "How CUDA parses
    // CUDA_VISIBLE_DEVICES"): the visible devices are the ids before it; none left is GPU045's.
    const known = ctx.machine.gpuCount;
    const stop = known === null ? -1 : p.kept.findIndex((e) => e.kind !== "index" || (e.index ?? 0) >= known);
    const kept = stop < 0 ? p.kept : p.kept.slice(0, stop);
    if (!kept.length) return null;
    const from = visible.from === "inline" ? "given inline" : visible.from;
    const dropped =
      stop < 0 ? "" : ` on this machine (${known} GPU${known === 1 ? "" : "s"}: parsing stops at ${p.kept[stop].text})`;
    return {
      count: kept.length,
      ids: kept.map((e) => (e.kind === "index" ? (e.index ?? -1) : -1)),
      why: `CUDA_VISIBLE_DEVICES=${visible.value} (${from}) leaves ${kept.length === 1 ? "one device" : `${kept.length} devices`} visible to it${dropped}`,
    };
  }
  if (unknown || ctx.machine.gpuCount === null) return null;
  const n = ctx.machine.gpuCount;
  return { count: n, why: `this machine has ${n} GPU${n === 1 ? "" : "s"}`, ids: [] };
}

/** GPU052: a shell command starts a Python script with a device ordinal option that the devices visible to it do not have. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU052",
    name: "launch-device-option-not-visible",
    severity: "warning",
    fixable: false,
    // Shell scripts only: never a YAML manifest.
    trigger: () => false,
    docs: {
      what: "In a shell script without `#SBATCH` lines (and a notebook's `!` lines), finds a `python script.py` command that passes the script a device ordinal on one of its own options (`--gpu 3`, `--device_num=7`, `--device cuda:1`) which the script hands to CUDA (`torch.cuda.set_device(args.gpu)`, `f\"cuda:{args.gpu}\"`, `torch.device(args.device)`), when the devices visible to that process do not include it: the CUDA_VISIBLE_DEVICES in force for the command (an inline prefix or the last `export` before it) leaves fewer devices (on a known machine, the ids before the first one it lacks; a list that hides every GPU is GPU045's), or, without one, the machine has fewer GPUs (the editor's nvidia-smi inventory, or `--gpus N` / `--inventory FILE` / `[tool.gpu-pilot] gpus` in the CLI). Also a `python main.py key=N` command whose arguments are all Hydra overrides (`key=value`, `+key=value`, `++key=value`), where main.py's `@hydra.main` task hands `cfg.key` to Lightning's `Trainer(devices=...)` (or `gpus=`) with a GPU accelerator (`gpu`, `cuda`, `auto` or none), when N is more than the devices visible to the command, compared the same way: Lightning asks for GPUs 0..N-1 and stops.",
      follows:
        "The commands of the script that start Python directly (`python x.py`, `python -u x.py`; not launchers, not under `srun`), the launched `.py` file (beside the script or up to three folders above it; a notebook's from its folder) read with its parse: its `add_argument` options (`dest=` or the option's own name; for an option it does not declare, those of the modules beside it that it imports, whose functions returning `parser.parse_args()` also give a namespace: `from getArgs import get_args`) and where the value of one reaches CUDA as a device ordinal from the namespace `parse_args()` returned: a name assigned `parser.parse_args()` or `parse_known_args()[0]`, a function of the file that returns one, or a parameter of one of the file's functions that the file calls with one, directly, through `int()`, or through a name assigned once from it in the same function. Option values through the script's once-assigned literals (`GPU=3 ... --gpu $GPU`) and the literals of files it sources. A namespace handed to a function or class that the script imports from a module beside it (`utils.transforms(args)`, `Architect(model, args)`) is followed into that module for its attribute assignments (not further, where it hands the namespace on). Silent when the launched file or such a module assigns that destination anywhere (`args.gpu = local_rank`), when the namespace goes to a callee not found beside the script (a library, a method of an object; printing and logging it are fine), or is changed through `vars(args)`/`args.__dict__`/`setattr`; also for options with `nargs` or `action`, for argparse's abbreviated options (`--dev` for `--device`), for values that expand a variable the script does not set, and for launchers (`torchrun`, `accelerate launch`, `deepspeed`: GPU040 reads their process counts). Hydra and Lightning: the override's key, given once as a literal whole number (or a once-assigned literal), and the Trainer call directly in the task function, its count read as `cfg.a.b` of the task's first parameter; silent where any argument is not an override (`-m`, `--cfg`, `$EXTRA`), where the task may change that value (an assignment anywhere in the task to its path or a path above it, `cfg.trainer = ...`, or to the config itself; the whole config handed to a call before the Trainer is made, `open_dict(cfg)`, `setup(cfg)`; printing is fine), for `**` arguments to the Trainer, another accelerator, and a script that names CUDA_VISIBLE_DEVICES. Not followed: config files and their defaults (only the command line's value is compared), `Trainer(**cfg.trainer)`, `hydra.utils.instantiate`, and Lightning under torchrun (its check is skipped under torchelastic).",
      why: "Measured on 2 x H200 (ground-truth.md, 'Other facts measured'): with `CUDA_VISIBLE_DEVICES=\"1\"`, `torch.cuda.set_device(1)` or `device=\"cuda:1\"` raises `torch.AcceleratorError: CUDA error: invalid device ordinal`: a device ordinal counts the visible devices only (0 to n-1), so an ordinal as large as their number does not exist in that process. The same holds for an ordinal beyond the machine's GPUs when nothing narrows them. The option's value is what the program uses (argparse stores the last value given for an option in its destination: Python documentation, argparse).",
      example:
        '#!/bin/bash\n# train.py: parser.add_argument("--gpu", type=int, default=0) ... torch.cuda.set_device(args.gpu)\nCUDA_VISIBLE_DEVICES=2 python train.py --gpu 2   # GPU052: only ordinal 0 is visible\n',
      fix: "#!/bin/bash\nCUDA_VISIBLE_DEVICES=2 python train.py --gpu 0   # physical GPU 2 is ordinal 0 in the process\n",
      whenNotToCare:
        "When the script is written for another machine (a server with more GPUs than the one it is checked on) and sets no CUDA_VISIBLE_DEVICES: silence the line with `# noqa: GPU052`, or do not give the CLI a GPU count for it. Not read: Slurm job scripts (the job's GPUs are not this machine's; GPU037 compares ordinals in Python with the job's GPUs).",
      references: [
        'ground-truth.md, Other facts measured: `CUDA_VISIBLE_DEVICES="1"`, then `torch.cuda.set_device(1)` or `device="cuda:1"` → `CUDA error: invalid device ordinal`',
        "Python documentation, argparse: dest (`--foo-bar` → `foo_bar`), parse_args, parse_known_args",
        "nvidia-smi --query-gpu=index,uuid (the inventory)",
        'Lightning-AI/pytorch-lightning@eddba2fc src/lightning/fabric/utilities/device_parser.py:49 `_parse_gpu_ids` (what `Trainer(devices=...)` is parsed with on CUDA): "Any int N > 0 indicates that GPUs [0..N) should be used" (:63), `list(range(gpus))` (:154), `_sanitize_gpu_ids` raises `MisconfigurationException(f"You requested gpu: {gpus}\\n But your machine only has: {all_available_gpus}")` (:133-136), skipped under torchelastic (:92-98)',
        'Hydra documentation, Override grammar (https://hydra.cc/docs/advanced/override_grammar/basic/): `key=value`, `+key=value`, `++key=value`; xiong-zhitong/DOFA-pytorch#20 (a generated script exported CUDA_VISIBLE_DEVICES=0 and passed num_gpus=2: "You requested gpu: [0, 1] But your machine only has: [0]")',
      ],
      language: "bash",
    },
  },
  checkManifest(ctx) {
    const facts = ctx.manifest.jobscript;
    if (ctx.manifest.kind !== "jobscript" || !facts || hasSbatchLine(ctx.manifest.src.text)) return;
    let literals: Map<string, string> | null = null;
    for (const c of facts.commands) {
      const line = parseLaunchLine(c.words, c.assignments);
      // launcher "other" with a script: `python [options] x.py` (commandLine.ts pythonScript).
      if (line.underSrun || line.launcher !== "other") continue;
      if (!line.script || !line.scriptArgs.length) continue;
      literals ??= literalsWithSourced(ctx.file, facts, ctx.read);
      if (!line.scriptArgs.some((w) => w.value.startsWith("-"))) {
        checkHydraDevices(ctx, c, line, literals);
        continue;
      }
      const path = resolveLiteral(line.script.value, literals);
      const launched = path === null ? null : launchedScript(ctx.file, path, ctx.read);
      const script =
        launched &&
        keptDests(
          withImportedParsers(launchedScriptFacts(launched.text), launched, line.scriptArgs, ctx),
          launched.path,
          ctx,
        );
      if (!script || !script.deviceDests.size || script.writesVisible) continue;
      const given = givenOrdinals(line.scriptArgs, script, literals);
      const seen = given.length ? visibleTo(ctx, c, line) : null;
      if (!seen) continue;
      const name = path!.replace(/^.*\//, "");
      for (const g of given) {
        if (g.ordinal < seen.count) continue;
        const use = script.deviceDests.get(g.dest)!;
        const valid = seen.count === 1 ? "ordinal 0" : `ordinals 0 to ${seen.count - 1}`;
        // The physical id given again as the ordinal (`CUDA_VISIBLE_DEVICES=2 ... --gpu 2`): its place in the list is its ordinal.
        const at = seen.ids.indexOf(g.ordinal);
        const hint = at >= 0 ? `; GPU ${g.ordinal} is ordinal ${at} in this process: pass ${g.option} ${at}` : "";
        ctx.report({
          range: wordsRange(ctx, g.start, g.end),
          message: `${g.option} gives ${name} CUDA device ${g.ordinal} (${use.form} at ${name}:${use.line}), but ${seen.why} (${valid}): CUDA fails with "invalid device ordinal"${hint}`,
        });
      }
    }
  },
};

/**
 * `python main.py num_gpus=2` where main.py's `@hydra.main` task passes `cfg.num_gpus` to
 * Lightning's `Trainer(devices=...)` (launch/lightningDevices.ts): Lightning asks for GPUs 0..N-1 and
 * stops when fewer are visible. Every argument must be a Hydra override (anything else may be an
 * option or a variable holding more overrides), each key given once, the value a literal whole number.
 */
function checkHydraDevices(
  ctx: ManifestRuleContext,
  c: ShellCommand,
  line: LaunchLine,
  literals: Map<string, string>,
): void {
  const given = new Map<string, { value: string; word: ShellWord } | null>();
  for (const w of line.scriptArgs) {
    const o = hydraOverride(w.value);
    if (!o) return;
    given.set(o.key, given.has(o.key) ? null : { value: o.value, word: w });
  }
  const path = resolveLiteral(line.script!.value, literals);
  const launched = path === null ? null : launchedScript(ctx.file, path, ctx.read);
  const uses = launched ? hydraLightningDevices(launched.text) : [];
  if (!uses.length) return;
  const name = path!.replace(/^.*\//, "");
  for (const use of uses) {
    const g = given.get(use.path);
    const value = g ? resolveLiteral(g.value, literals) : null;
    const n = value !== null && /^[0-9]{1,4}$/.test(value) ? Number(value) : 0;
    if (!g || n < 1) continue;
    const seen = visibleTo(ctx, c, line);
    if (!seen || n <= seen.count) continue;
    const asked = `[${Array.from({ length: n }, (_, k) => k).join(", ")}]`;
    const has = `[${Array.from({ length: seen.count }, (_, k) => k).join(", ")}]`;
    ctx.report({
      range: wordsRange(ctx, g.word, g.word),
      message: `${g.word.value} gives ${name} ${n} GPUs for Lightning (Trainer(${use.keyword}=cfg.${use.path}) at ${name}:${use.line}: GPUs ${asked}), but ${seen.why}: Lightning stops with "You requested gpu: ${asked} But your machine only has: ${has}"; pass ${use.path}=${seen.count} or make ${n} GPUs visible`,
    });
  }
}
