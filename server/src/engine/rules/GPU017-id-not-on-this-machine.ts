import type { PythonRule, RuleContext } from "../rule";
import { envWrites } from "../rule";
import { nodeRange } from "../python/events";
import { deviceUses } from "../python/devices";
import { argparseDefaultOf, argparseDefaultOrdinals } from "../launch/script";
import { missingIdMessage } from "./shared/machineIds";
import { loadedConfigOrdinals } from "./shared/loadedConfig";
import { passedOrdinals } from "./shared/passedOrdinals";
import { optionListOrdinals } from "./shared/optionLists";

/** GPU017: CUDA_VISIBLE_DEVICES ids or device ordinals that do not exist on this machine (machine-aware). */
export const rule: PythonRule = {
  meta: {
    code: "GPU017",
    name: "id-not-on-this-machine",
    severity: "warning",
    fixable: false,
    // A CUDA_VISIBLE_DEVICES access, or a device use (the words cuda or device: python/devices.ts
    // `deviceUses`); runs only with a known machine.
    // `DataParallel` too in preview: a list of ids from an argparse default given by position.
    // A YAML config loaded by a literal path and passed to a project function (shared/loadedConfig.ts);
    // through an option's default, or the argparse namespace, in preview. An option's list of ids
    // that a project function returns in its namespace (shared/optionLists.ts): only in a file that
    // the words above let through (`opt.gpu_ids` names a GPU).
    // A literal passed to another project module's function or class: its name is imported and
    // the file names a GPU (shared/passedOrdinals.ts; a function of the file itself names cuda or
    // device). Every import alone parsed 1,072 instead of 375 of python3-torch's 1,141 files with
    // the machine known (2.8 -> 4.3 s).
    trigger: (t, preview) =>
      t.envAccess() ||
      (t.has("import") && (t.has("gpu") || t.has("GPU") || t.has("Gpu") || t.has("yaml") || t.has("OmegaConf"))) ||
      t.has("cuda") ||
      t.has("device") ||
      (preview && (t.has("DataParallel") || t.has("yaml") || t.has("OmegaConf") || t.has("parse_args"))),
    needs: "machine",
    docs: {
      what: "Compares CUDA_VISIBLE_DEVICES ids (indices and `GPU-`/`MIG-` UUIDs or UUID prefixes) and device ordinals with the GPUs of the machine: the inventory that GPU Pilot's GPU view reads from nvidia-smi, or, in the CLI, `--gpus N` / `--inventory FILE` (nvidia-smi CSV). Off when the machine is unknown.",
      follows:
        'The literal CUDA_VISIBLE_DEVICES values written by the module\'s code in the order it runs (top level, `if __name__ == "__main__":` blocks, notebook cells in order with their `%env` lines), including the bodies of the module\'s own functions, class constructors and methods (on `self` or an instance it made) that it calls, two calls deep; a value copied from an argparse option (`os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id`) as the option\'s plain-string default, what a run without that option writes (where the file declares the option once, never assigns that attribute, and hands the namespace to no code it does not define, printing and logging aside); literal device ordinals anywhere in the file, where the file writes no CUDA_VISIBLE_DEVICES and no job script of the project starts it (GPU004 and GPU037 judge those); a literal integer that a call passes to a function or class of the file or of another project module, in a file that names `cuda`, `device` or a GPU (`gpu`, `GPU`) somewhere (`PoseEstimator(1)`, `Estimator(gpu_id=1)`; the signature\'s literal default where the call passes nothing, for a function or class of the file itself: `def __init__(self, gpu_id=1)`), whose parameter reaches `torch.cuda.set_device`, `torch.cuda.device`, `torch.device`, a `cuda:N` string (`f"cuda:{gpu_id}"`, `"cuda:%d" % gpu_id`), `.cuda()`, `.to()` or a torch call\'s `device=` unchanged (also as `self.gpu_id`, the class\'s one assignment of it, made in the constructor from the parameter before the use), reported at the call\'s argument with the use as related information, on the same conditions as literal ordinals, and silent where the parameter is bound again in the callee, compared with anything but a literal there (a guard), the use comes after a condition that names another parameter or an attribute of `self` (`get_device(use_cpu=True, gpu_id=5)`), the use is in a `try` or the callee names `device_count`, a decorator other than torch\'s wraps the callee, the call is in a `try`, under a condition that counts GPUs or in a function that a decorator may skip or that counts GPUs or skips itself before it, a `*args`/`**kwargs` may fill the parameter, the file is a test module (or sets `pytestmark`), the machine has no GPU, or the file or the callee\'s module names CUDA_VISIBLE_DEVICES in its code; and the machine\'s GPU inventory. In preview, also the device ordinals that the default of an argparse option of the file gives (a run without the option): an integer default used as an ordinal (`default=1` into `f"cuda:{args.gpu}"`, `set_device(args.gpu)`), a string one where the use builds a device string or converts it, and a `"0,1"` default that the file turns into ints (`[int(i) for i in args.gpu_ids.split(",")]`, `list(map(int, ...))`) and passes as `device_ids` (DataParallel\'s second argument too) or indexes (`ids[0]`), also converted in place (`args.gpu_ids = [int(s) for s in args.gpu_ids.split(",")]`, the destination\'s one assignment); silent where the option is declared more than once, its destination is assigned, the namespace goes to code the file does not define, the file calls `set_defaults` or hands its parser to a call, or a script or document of the project starts the file (it may pass the option). A YAML config that the file loads with a literal path (`cfg = OmegaConf.load("cfg.yaml")`, `yaml.safe_load(open("cfg.yaml"))` or a `with open("cfg.yaml") as f` read; the path relative to the folder of the file; in preview also the plain-string default of an argparse option read there, `open(args.config)`, where no script or document of the project starts the file and it does not call `set_defaults`) and passes (or a section of it, `cfg["train"]`) to a function or class of another project module that uses one of its entries as a device ordinal (`f"cuda:{cfg[\'gpu\']}"`, `set_device(cfg.gpu)`, also through `self.cfg = cfg` in the constructor): the integer under the top-level key (a string of digits where the use converts it or builds a device string; a list of integers where the entry is DataParallel\'s `device_ids`), reported at the argument that passes the config; in preview, likewise the file\'s argparse namespace (`args = parser.parse_args()`) passed so, with the default of the option an attribute use reads (`set_device(args.gpu)`), where no script or document of the project starts the file. Silent where the name is used otherwise than read, printed or passed to such calls (a call may change it: `OmegaConf.merge`), the callee hands it (or `self.cfg`) to a call, calls a method of its own before the use or assigns the entry, the file is not there, or the module of the callee names CUDA_VISIBLE_DEVICES in its code. Also such a config (or section) that the callee unpacks with `**` into a call of a project function (`initialize_model(self.model, **self.init_config)`; a constructor keeping it as `self.init_config`, the class\'s one assignment of it, and a method of the class unpacking it only where the file calls that method on the instance it made, `server = Server(...)` then `server.setup()`) whose parameter of the entry\'s name becomes DataParallel\'s ids (also through a function of its module it calls) or a device ordinal (an integer entry); silent where the call writes that parameter itself, the dict is changed or assigned again in the class, a function on the way counts GPUs (`device_count`) or holds the use in a `try`, or the final callee\'s module names CUDA_VISIBLE_DEVICES in its code. A list of ids that a project function or method called without arguments (`opt = TrainOptions().parse()`) returns in its argparse namespace, from an option\'s `"0,1"` default that it turns into ints in place (`opt.gpu_ids = ids` after `ids = []` and a loop appending `int(t)` for each `t` of `opt.gpu_ids.split(",")`, under `if g >= 0` at most, or a comprehension), passed as it is (`define_G(opt.ngf, opt.gpu_ids)`) to a project function that hands that parameter to DataParallel\'s ids (also through a function of its module it calls: `init_net(net, gpu_ids)`), reported at the argument: in the default set where scripts of the project start the file and none passes a spelling of the option or an abbreviation of it (every word after the file literal), in preview where nothing starts it; silent where a document starts it, the option is declared more than once or has no plain-string default, the attribute is assigned elsewhere in its module, the namespace is handed to a call (printing and `vars()` reads aside) or bound again, a function on the way counts GPUs or holds a `try`, the file, the options\' module or the callee\'s module names CUDA_VISIBLE_DEVICES in its code (a string, not a comment), or the machine has no GPU. Not followed: other computed values, writes in functions the module never calls, and values set in the shell or by a launcher (GPU045 reads shell scripts).',
      why: 'Measured on 2 x H200 (ground-truth.md, \'How CUDA parses CUDA_VISIBLE_DEVICES\'): CUDA stops parsing at the first id that does not exist, so `"1,7,0"` leaves only GPU 1 visible and GPU 0 silently disappears; `"7"` alone hides every GPU. A `cuda:N` ordinal at or beyond the number of GPUs raises `invalid device ordinal` at first use.',
      example:
        'import os\n\n# on a machine with 2 GPUs\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,7,0"  # GPU 0 is dropped\n',
      fix: 'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "1,0"\n',
      whenNotToCare:
        "When the file is written for another machine (a cluster node with more GPUs): silence it with `# noqa: GPU017` or by not passing an inventory in CI. Ordinals in a file that a Slurm job script of the project starts are not compared with this machine: GPU037 compares them with the job's GPUs.",
      references: [
        'ground-truth.md: rows "0,5,1" and "1,7,0" (parsing stops at the first id that does not exist)',
        "nvidia-smi --query-gpu=index,uuid (the inventory)",
      ],
    },
  },
  check(ctx) {
    const n = ctx.machine.gpuCount;
    if (n === null) return;
    // A literal value, or the argparse default of the option it copies (`= args.gpu_id` with
    // `add_argument("--gpu-id", default="7")`): what a run without that option writes.
    const writes = envWrites(ctx.model)
      .filter((w) => w.variable === "CUDA_VISIBLE_DEVICES")
      .map((w) => ({ w, fallback: w.literal === null ? argparseDefaultOf(ctx.model, w.value) : null }))
      .filter(({ w, fallback }) => w.literal !== null || fallback !== null);
    for (const { w, fallback } of writes) {
      const message = missingIdMessage(w.literal ?? fallback!.text, ctx.machine);
      if (message)
        ctx.report({
          range: w.range,
          message: fallback
            ? `${message} (the default of ${fallback.option}, line ${fallback.line}: a run without ${fallback.option} writes it)`
            : message,
        });
    }
    if (writes.length > 0) return; // ordinals are then relative to the file's own selection (GPU004)
    // A file that a Slurm job script starts runs on the job's GPUs, not this machine's (GPU037).
    if ((ctx.slurm?.length ?? 0) > 0) return;
    for (const use of deviceUses(ctx.model)) {
      if (use.ordinal < n) continue;
      ctx.report({
        range: nodeRange(use.node),
        message: `${use.form} names device ${use.ordinal}, but this machine has ${n} GPU${n === 1 ? "" : "s"} (ordinals 0..${n - 1}): invalid device ordinal at first use`,
      });
    }
    reportPassedOrdinals(ctx, n);
    reportConfigOrdinals(ctx, n);
    reportOptionLists(ctx, n);
    // Preview: ordinals that the default of an argparse option gives (a run without the option).
    // A script or document of the project that starts the file may pass the option (its arguments
    // are not read here): silent then.
    if (!ctx.preview) return;
    const defaults = argparseDefaultOrdinals(ctx.model);
    if (!defaults.length || (ctx.launchNodes?.length ?? 0) > 0) return;
    if ((ctx.project?.documentedPythonLaunches?.().length ?? 0) > 0) return;
    for (const d of defaults) {
      const missing = d.ids.filter((id) => id >= n);
      if (!missing.length) continue;
      ctx.report({
        range: nodeRange(d.node),
        message: `${d.form} gets device ${missing.join(", ")} from the default of ${d.option} (${d.text}, line ${d.line}), but this machine has ${n} GPU${n === 1 ? "" : "s"} (ordinals 0..${n - 1}): a run without ${d.option} fails (${d.form === "device_ids=" ? "DataParallel: Invalid device id" : "invalid device ordinal"})`,
        preview: true,
      });
    }
  },
};

/**
 * Literal integers (or a parameter's literal default, where the call passes nothing) that a call
 * hands to a function or class, of this file or another project module, whose parameter reaches a
 * CUDA device use unchanged (shared/passedOrdinals.ts): the call runs with that ordinal whenever
 * its line runs, so the device it names must exist.
 */
function reportPassedOrdinals(ctx: RuleContext, n: number): void {
  // No GPU at all: a callee may fall back to the CPU (`f"cuda:{i}" if torch.cuda.is_available() else "cpu"`).
  if (n === 0) return;
  for (const p of passedOrdinals(ctx, n)) {
    if (p.ordinal < n) continue;
    const gpus = `this machine has ${n} GPU${n === 1 ? "" : "s"} (ordinals 0..${n - 1})`;
    const head = p.passed
      ? `${p.callee}() gets ${p.ordinal} as ${p.use.name}`
      : `${p.callee}() leaves ${p.use.name} at its default ${p.ordinal}`;
    ctx.report({
      range: nodeRange(p.node),
      message: `${head} and uses it in ${p.use.form} (${p.use.where}), but ${gpus}: invalid device ordinal at first use`,
      related: [
        {
          range: {
            start: { line: p.use.start[0], character: p.use.start[1] },
            end: { line: p.use.end[0], character: p.use.end[1] },
          },
          message: `${p.use.name} used as a device ordinal here`,
          ...(p.use.file ? { file: p.use.file } : {}),
        },
      ],
    });
  }
}

/**
 * Ordinals that a YAML config loaded with a literal path hands to another project module's function
 * or class (shared/loadedConfig.ts), reported at the argument that passes the config: what every
 * run gets, as a literal written in the code. In preview, the same through an option's default (the
 * config path's, or the namespace's), which a launch may override. Silent where the callee's module
 * names CUDA_VISIBLE_DEVICES (its ordinals may be relative to a selection).
 */
function reportConfigOrdinals(ctx: RuleContext, n: number): void {
  for (const c of loadedConfigOrdinals(ctx)) {
    if (!c.fixed && !ctx.preview) continue;
    // Without a GPU, DataParallel keeps the module on the CPU and never reads its ids.
    if (n === 0 && c.use.list) continue;
    const missing = c.ids.filter((id) => id >= n);
    if (!missing.length || ctx.project?.callableModuleMentions?.(c.path, "CUDA_VISIBLE_DEVICES") !== false) continue;
    const entry = c.use.subscript ? `${c.use.name}["${c.use.key}"]` : `${c.use.name}.${c.use.key}`;
    ctx.report({
      range: nodeRange(c.node),
      message: `${c.origin}, and ${c.callee}() uses ${entry} in ${c.use.form} (${c.use.where}), but this machine has ${n} GPU${n === 1 ? "" : "s"} (ordinals 0..${n - 1}): ${c.use.list ? `device ${missing.join(", ")} does not exist (DataParallel: Invalid device id)` : "invalid device ordinal at first use"}`,
      ...(c.fixed ? {} : { preview: true }),
    });
  }
}

/**
 * Lists of device ids from an option's `"0,1"` default that a project function returns in its
 * namespace and the file passes to a project function's DataParallel (shared/optionLists.ts),
 * reported at the argument: in the default set where every project script that starts the file
 * passes no spelling of the option (what runs is the default), in preview where nothing starts it.
 */
function reportOptionLists(ctx: RuleContext, n: number): void {
  // Without a GPU, DataParallel keeps the module on the CPU and never reads its ids.
  if (n === 0) return;
  for (const o of optionListOrdinals(ctx)) {
    const missing = o.ids.filter((id) => id >= n);
    if (!missing.length || (!o.settled && !ctx.preview)) continue;
    const run = o.settled ? "the project's scripts start this file without it" : `a run without ${o.option}`;
    ctx.report({
      range: nodeRange(o.node),
      message: `${o.node.text} is [${o.ids.join(", ")}] from the default of ${o.option} (${o.text}, ${o.where}: ${run}), and ${o.callee}() hands it to ${o.form} (${o.useWhere}), but this machine has ${n} GPU${n === 1 ? "" : "s"} (ordinals 0..${n - 1}): device ${missing.join(", ")} does not exist (DataParallel: Invalid device id)`,
      ...(o.settled ? {} : { preview: true }),
    });
  }
}
