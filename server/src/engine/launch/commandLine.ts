/**
 * One model of a launch command line, whatever file it is written in (a shell script, a Slurm job
 * script, a Dockerfile `CMD`/`ENTRYPOINT`, a compose `command`, a Kubernetes container's
 * `command`/`args`): from the argv words it tells the launcher, the number of processes it starts
 * per node, the GPU ids it selects itself, and the environment written in front of it.
 *
 * Launchers and what they start (sources quoted in the docstrings below):
 * - `torchrun`, `python -m torch.distributed.run|launch`: `--nproc_per_node`/`--nproc-per-node`
 *   workers per node (default 1; `gpu`/`auto`: one per visible GPU);
 * - `accelerate launch` (also `python -m accelerate.commands.launch`): `--num_processes` in total,
 *   `--num_machines` nodes, `--gpu_ids` (which accelerate writes into CUDA_VISIBLE_DEVICES),
 *   `--config_file` (an accelerate YAML read by the caller);
 * - `deepspeed`: `--num_gpus` per node, `--include localhost:0,1`;
 * - `colossalai run`: `--nproc_per_node` per node, passed on to torch's launcher
 *   (hpcaitech/ColossalAI 4f9953be, colossalai/cli/launcher/run.py: `f"--nproc_per_node={nproc_per_node}"`);
 * - vLLM's OpenAI server, `vllm serve MODEL ...` and `python -m vllm.entrypoints.openai.api_server ...`
 *   (also the older `vllm.entrypoints.api_server`), and the arguments of a container whose image's
 *   ENTRYPOINT is that server (launch/sources.ts, {@link vllmServerArgs}): one worker per GPU of its
 *   tensor-parallel x pipeline-parallel group, per data-parallel replica ({@link VllmParallel});
 * - anything else (`python train.py`, a console script) is `other`: one process, not read.
 *
 * Prefixes unwrapped: `VAR=value cmd`, `env [-i] [-u NAME] VAR=value cmd`, `nohup`, `exec`, `srun
 * [options]` (its options are kept for the Slurm rules: manifests/jobscript.ts `launchOf`).
 * Words are shell.ts words: quotes removed, expansions (`$X`) kept as written.
 */
import type { ShellWord } from "../manifests/shell";
import { launcherWords, launchOf, optionValue, PYTHON_VALUE_OPTIONS } from "../manifests/jobscript";
import type { ShellCommand } from "../manifests/shell";

/** The launchers told apart. */
export type Launcher = "torchrun" | "accelerate" | "deepspeed" | "colossalai" | "vllm" | "other";

/**
 * The parallel sizes of a vLLM server's command line (vllm-project/vllm@99d7eb5d
 * vllm/engine/arg_utils.py `add_cli_args`: `"--tensor-parallel-size", "-tp"`,
 * `"--pipeline-parallel-size", "-pp"`, `"--data-parallel-size", "-dp"`; FlexibleArgumentParser,
 * vllm/utils/argparse_utils.py@c836a6fe, takes `_` for `-` in a `--` option's name; argparse keeps
 * the last of repeated options). Each is null when not written (vLLM's default is 1).
 */
export interface VllmParallel {
  tp: OptionValue | null;
  pp: OptionValue | null;
  dp: OptionValue | null;
  /**
   * The first word that may put workers on other nodes or change the sizes out of sight, when one
   * is written: `--distributed-executor-backend` other than `mp`, `--nnodes`, `--node-rank`,
   * `--headless`, a data-parallel option other than the size (`--data-parallel-size-local`,
   * `--data-parallel-rank`, `--data-parallel-start-rank`, `--data-parallel-address`,
   * `--data-parallel-backend`, `--data-parallel-hybrid-lb`, `--data-parallel-external-lb`, their short
   * forms), `--worker-use-ray`, `--config FILE` (its sizes are not read), or an expansion that may hold options
   * (`$EXTRA_ARGS`, compose's `${VAR}`, Kubernetes' `$(VAR)`); null when none.
   */
  elsewhere: ShellWord | null;
}

/** An option's value with the words that hold it (one word for `--x=v`, two for `--x v`). */
export interface OptionValue {
  value: string;
  start: ShellWord;
  end: ShellWord;
}

/** A launch command line, parsed. */
export interface LaunchLine {
  launcher: Launcher;
  /** The launcher's words (after any `env`/`VAR=`/`srun` prefix): `words[0]` names the program. */
  words: ShellWord[];
  /** `srun` runs it (the Slurm rules, GPU022, check the task count). */
  underSrun: boolean;
  /** Variables set for this command only: `VAR=v cmd` and `env VAR=v cmd`, by name. */
  inlineEnv: Map<string, { value: string; word: ShellWord }>;
  /** `env -i`: the command starts with an empty environment (no exported variable reaches it). */
  clearsEnv: boolean;
  /**
   * The option that sets the number of processes per node (torchrun `--nproc_per_node`,
   * deepspeed `--num_gpus`) or in total (accelerate `--num_processes`); null when not written.
   */
  processes: OptionValue | null;
  /** accelerate `--num_machines`; null when not written. */
  machines: OptionValue | null;
  /** accelerate `--gpu_ids`, deepspeed `--include`: GPU ids the launcher selects itself. */
  gpuIds: OptionValue | null;
  /** deepspeed `--exclude`. */
  exclude: OptionValue | null;
  /** deepspeed `--hostfile`/`-H` (the launcher's resource pool); absent or null when not written. */
  hostfile?: OptionValue | null;
  /** accelerate `--config_file`. */
  configFile: OptionValue | null;
  /** The program the launcher starts (the word after its own options: a script path, or a module after `-m`; for a plain `python x.py`, the script); null when none is written. */
  script: ShellWord | null;
  /** The words after {@link script}: the program's arguments, which the launcher passes on unread. */
  scriptArgs: ShellWord[];
  /**
   * Among the launcher's own options, an expansion whose words are not known
   * (`torchrun $DISTRIBUTED_ARGS train.py`, `${ARGS[@]}`: manifests/jobscript.ts `launcherWords`):
   * which options the launcher gets is not known, so neither is the value of one that is written
   * (a later one in the variable wins) nor the absence of one. Absent: false.
   */
  unknownOptions?: boolean;
  /** vLLM's server (launcher `vllm`): its parallel sizes. */
  vllm?: VllmParallel;
  /**
   * The server that the container image's ENTRYPOINT runs, when {@link words} are only its
   * arguments (a compose `command` or Kubernetes `args` for `vllm/vllm-openai`): `vllm serve`.
   */
  imageEntrypoint?: string;
}

/** Whether a word names a Python interpreter (`python`, `python3.11`, `/usr/bin/python3`). */
export const isPython = (w: string): boolean => /^(?:.*\/)?python(?:[0-9.]*)$/.test(w);

/**
 * Console scripts of GPU packages that run Python (each a `[project.scripts]` / `console_scripts`
 * entry of the package named), with the subcommands that start GPU work where the name alone is
 * also another program's (`swift` is also Apple's compiler). A program that one of them starts
 * inherits the shell's environment as `python` would. Sources, read in each package's setup.py or
 * pyproject.toml: LLaMA-Factory `llamafactory-cli = llamafactory.cli:main` (and `lmf`); nnU-Net v2
 * `nnUNetv2_train = nnunetv2.run.run_training:run_training_entry`, `nnUNetv2_predict`; nnU-Net v1
 * `nnUNet_train`, `nnUNet_predict`; vLLM `vllm = "vllm.entrypoints.cli.main:main"`; lm-evaluation-harness
 * `lm_eval` / `lm-eval = "lm_eval.__main__:cli_evaluate"`; Ultralytics `yolo` / `ultralytics =
 * "ultralytics.cfg:entrypoint"`; ms-swift `swift=swift.cli.main:cli_main`; fairseq
 * `fairseq-train = fairseq_cli.train:cli_main` (and `-generate`, `-interactive`, `-validate`);
 * Jupyter `jupyter = "jupyter_core.command:main"` (its kernels inherit the server's environment).
 */
export const PYTHON_PROGRAMS: ReadonlyMap<string, ReadonlySet<string> | null> = new Map([
  ["llamafactory-cli", null],
  ["lmf", null],
  ["nnUNetv2_train", null],
  ["nnUNetv2_predict", null],
  ["nnUNet_train", null],
  ["nnUNet_predict", null],
  ["vllm", new Set(["serve", "bench", "run-batch", "chat", "complete"])],
  ["lm_eval", null],
  ["lm-eval", null],
  ["yolo", null],
  ["ultralytics", null],
  ["swift", new Set(["sft", "pt", "rlhf", "infer", "deploy", "export", "eval", "sample", "app", "web-ui"])],
  ["fairseq-train", null],
  ["fairseq-generate", null],
  ["fairseq-interactive", null],
  ["fairseq-validate", null],
  ["jupyter", new Set(["lab", "notebook", "nbconvert", "execute", "server"])],
]);

/**
 * The catalogued Python program (PYTHON_PROGRAMS) that `words` start, as messages name it
 * (`llamafactory-cli`, `vllm serve`); undefined when they start none of them.
 */
export function pythonProgram(words: readonly ShellWord[]): string | undefined {
  const name = (words[0]?.value ?? "").replace(/^.*\//, "");
  const subcommands = PYTHON_PROGRAMS.get(name);
  if (subcommands === undefined) return undefined;
  if (subcommands === null) return name;
  const sub = words[1]?.value ?? "";
  return subcommands.has(sub) ? `${name} ${sub}` : undefined;
}

/** How messages name each launcher (`accelerate launch`, `colossalai run`); "" for `other`. */
export const LAUNCHER_NAME: Readonly<Record<Launcher, string>> = {
  torchrun: "torchrun",
  accelerate: "accelerate launch",
  deepspeed: "deepspeed",
  colossalai: "colossalai run",
  vllm: "vllm serve",
  other: "",
};
const base = (w: string) => w.replace(/^.*\//, "");
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Options of `env` (GNU coreutils env(1)) that take a value. */
const ENV_VALUE_OPTIONS = new Set(["-u", "--unset", "-C", "--chdir", "-S", "--split-string"]);

/**
 * The launcher of `words` and the index of the word after it (where its own options start).
 * accelerate's CLI: "accelerate launch {script_name.py}" (Accelerate docs, "The Command Line":
 * https://huggingface.co/docs/accelerate/package_reference/cli).
 */
function launcherOf(words: readonly ShellWord[]): { launcher: Launcher; from: number } {
  const first = words[0]?.value ?? "";
  const b = base(first);
  if (b === "torchrun") return { launcher: "torchrun", from: 1 };
  if (b === "accelerate" && words[1]?.value === "launch") return { launcher: "accelerate", from: 2 };
  if (b === "accelerate-launch") return { launcher: "accelerate", from: 1 };
  if (b === "deepspeed") return { launcher: "deepspeed", from: 1 };
  if (b === "colossalai" && words[1]?.value === "run") return { launcher: "colossalai", from: 2 };
  if (b === "vllm" && words[1]?.value === "serve") return { launcher: "vllm", from: 2 };
  if (isPython(first)) {
    // python [-u -O -B ...] -m module
    for (let k = 1; k < words.length; k++) {
      const w = words[k].value;
      if (w === "-m") {
        const mod = words[k + 1]?.value ?? "";
        if (/^torch\.distributed\.(?:run|launch)$/.test(mod)) return { launcher: "torchrun", from: k + 2 };
        if (mod === "accelerate.commands.launch") return { launcher: "accelerate", from: k + 2 };
        if (mod === "deepspeed.launcher.runner") return { launcher: "deepspeed", from: k + 2 };
        if (VLLM_SERVER_MODULES.has(mod)) return { launcher: "vllm", from: k + 2 };
        return { launcher: "other", from: k + 2 };
      }
      if (!w.startsWith("-")) break; // a script: python runs it, one process
    }
  }
  return { launcher: "other", from: 1 };
}

/** `underscore_name` → both spellings with dashes and underscores (accelerate accepts either). */
const spellings = (...names: string[]) =>
  names.flatMap((n) => [n, n.replace(/_/g, "-")]).filter((n, i, a) => a.indexOf(n) === i);

/**
 * Reads the options and `VAR=value` words of an `env` prefix (`words[0]` is `env`) into `inlineEnv`
 * (`-u NAME` deletes NAME from it).
 * @returns the index of the first word after them, and whether `-i`/`-` clears the environment.
 */
function envPrefix(
  words: readonly ShellWord[],
  inlineEnv: Map<string, { value: string; word: ShellWord }>,
): { next: number; clearsEnv: boolean } {
  let clearsEnv = false;
  let k = 1;
  for (; k < words.length; k++) {
    const w = words[k].value;
    if (w === "-i" || w === "--ignore-environment" || w === "-") {
      clearsEnv = true;
      continue;
    }
    if (ENV_VALUE_OPTIONS.has(w)) {
      if (w === "-u" || w === "--unset") inlineEnv.delete(words[k + 1]?.value ?? "");
      k++;
      continue;
    }
    if (w.startsWith("-")) continue;
    const eq = w.indexOf("=");
    if (eq > 0 && NAME.test(w.slice(0, eq))) {
      inlineEnv.set(w.slice(0, eq), { value: w.slice(eq + 1), word: words[k] });
      continue;
    }
    break;
  }
  return { next: k, clearsEnv };
}

/**
 * Parses a launch command line from its words and the assignments written before them.
 * @param words the command's words (redirections already left out, shell.ts).
 * @param assignments `VAR=value` words written before the command (shell.ts ShellCommand.assignments).
 * @returns the launch; `launcher` is `other` for any program that is not a known launcher.
 */
export function parseLaunchLine(
  words: readonly ShellWord[],
  assignments: ReadonlyArray<{ name: string; value: string; word: ShellWord }> = [],
): LaunchLine {
  const inlineEnv = new Map<string, { value: string; word: ShellWord }>();
  for (const a of assignments) inlineEnv.set(a.name, { value: a.value, word: a.word });
  let clearsEnv = false;
  let rest = [...words];
  let underSrun = false;
  // Unwrap prefixes, in any order: env, nohup, exec, srun.
  for (let guard = 0; guard < 8 && rest.length; guard++) {
    const b = base(rest[0].value);
    if (b === "env") {
      const e = envPrefix(rest, inlineEnv);
      if (e.clearsEnv) clearsEnv = true;
      rest = rest.slice(e.next);
      continue;
    }
    if (b === "nohup" || b === "exec") {
      rest = rest.slice(1).filter((w, i) => !(i === 0 && w.value.startsWith("-")));
      continue;
    }
    if (b === "srun") {
      const l = launchOf({ assignments: [], words: rest, start: 0, end: 0 } as ShellCommand);
      underSrun = true;
      rest = l.words;
      continue;
    }
    break;
  }
  const { launcher, from } = launcherOf(rest);
  const none = bareLaunch(launcher, rest, { underSrun, inlineEnv, clearsEnv });
  if (launcher === "other") return isPython(rest[0]?.value ?? "") ? { ...none, ...pythonScript(rest) } : none;
  if (launcher === "vllm") return { ...none, vllm: vllmParallel(rest.slice(from)) };
  // The launcher's own options: up to its program, the first word that is no option and no option's value.
  const { program: at, unknown } = launcherWords(rest, from, undefined);
  const opts = rest.slice(from, at);
  const script = rest[at] && rest[at].value !== "--" ? rest[at] : null;
  const empty: LaunchLine = {
    ...none,
    script,
    scriptArgs: script ? rest.slice(at + 1) : [],
    ...(unknown ? { unknownOptions: true } : {}),
  };
  if (launcher === "torchrun" || launcher === "colossalai") {
    return { ...empty, processes: optionValue(opts, ["--nproc_per_node", "--nproc-per-node"]) };
  }
  if (launcher === "accelerate") {
    return {
      ...empty,
      processes: optionValue(opts, spellings("--num_processes")),
      machines: optionValue(opts, spellings("--num_machines")),
      gpuIds: optionValue(opts, spellings("--gpu_ids")),
      configFile: optionValue(opts, spellings("--config_file")),
    };
  }
  return {
    ...empty,
    processes: optionValue(opts, spellings("--num_gpus")),
    gpuIds: optionValue(opts, ["--include", "-i"]),
    exclude: optionValue(opts, ["--exclude", "-e"]),
    hostfile: optionValue(opts, ["--hostfile", "-H"]),
  };
}

/**
 * The script of `python [options] script.py args...` and its arguments (python(1): "script: ...
 * the name of a file containing Python statements"; `-c`, `-m` and `-` read no script file).
 */
function pythonScript(words: readonly ShellWord[]): Pick<LaunchLine, "script" | "scriptArgs"> {
  for (let k = 1; k < words.length; k++) {
    const w = words[k].value;
    if (w === "-c" || w === "-m" || w === "-" || w === "--") break;
    if (PYTHON_VALUE_OPTIONS.has(w)) k++;
    else if (!w.startsWith("-")) return { script: words[k], scriptArgs: words.slice(k + 1) };
  }
  return { script: null, scriptArgs: [] };
}

/** A whole number written as digits, or null. */
export const wholeNumber = (s: string | null | undefined): number | null =>
  s !== null && s !== undefined && /^[0-9]{1,6}$/.test(s.trim()) ? Number(s.trim()) : null;

/** The modules that `python -m` runs as vLLM's server (vllm/entrypoints/openai/api_server.py, vllm/entrypoints/api_server.py). */
const VLLM_SERVER_MODULES: ReadonlySet<string> = new Set([
  "vllm.entrypoints.openai.api_server",
  "vllm.entrypoints.api_server",
]);

/**
 * Whether a container image is vLLM's OpenAI server image (`vllm/vllm-openai[:tag][@digest]`, also
 * with `docker.io/` in front), whose ENTRYPOINT runs the server on the container's arguments:
 * vllm-project/vllm docker/Dockerfile, stage `vllm-openai`, `ENTRYPOINT ["vllm", "serve"]` at
 * dead20ba, `ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]` at 0000977e.
 */
export const isVllmServerImage = (image: string | null): boolean =>
  image !== null &&
  /^(?:(?:docker\.io|registry-1\.docker\.io|index\.docker\.io)\/)?vllm\/vllm-openai(?::[A-Za-z0-9_.-]+)?(?:@sha256:[0-9a-f]+)?$/.test(
    image.trim(),
  );

/**
 * The launch of a container whose image's ENTRYPOINT is vLLM's server ({@link isVllmServerImage})
 * given only its arguments (a compose `command` without `entrypoint`, Kubernetes `args` without
 * `command`): the server with those arguments.
 */
export function vllmServerArgs(args: readonly ShellWord[]): LaunchLine {
  return { ...bareLaunch("vllm", [...args]), vllm: vllmParallel(args), imageEntrypoint: "vllm serve" };
}

/** A launch of `launcher` with `words` and none of its options read (no count, no ids, no program). */
function bareLaunch(
  launcher: Launcher,
  words: ShellWord[],
  env: Pick<LaunchLine, "underSrun" | "inlineEnv" | "clearsEnv"> = {
    underSrun: false,
    inlineEnv: new Map(),
    clearsEnv: false,
  },
): LaunchLine {
  return {
    launcher,
    words,
    ...env,
    processes: null,
    machines: null,
    gpuIds: null,
    exclude: null,
    configFile: null,
    script: null,
    scriptArgs: [],
  };
}

const VLLM_TP = new Set(["--tensor-parallel-size", "-tp"]);
const VLLM_PP = new Set(["--pipeline-parallel-size", "-pp"]);
const VLLM_DP = new Set(["--data-parallel-size", "-dp"]);
/**
 * vLLM options under which the workers may sit on other nodes or the sizes are read elsewhere
 * (vllm/engine/arg_utils.py@99d7eb5d `add_cli_args`; `--nnodes`/`-n`, `--node-rank`/`-r` in later
 * releases; `--config` in vllm/utils/argparse_utils.py@c836a6fe `_pull_args_from_config`; the Ray
 * switches `--worker-use-ray`/`--engine-use-ray` of releases before 0.5).
 */
const VLLM_ELSEWHERE = new Set([
  "--nnodes",
  "-n",
  "--node-rank",
  "-r",
  "--headless",
  "--data-parallel-size-local",
  "-dpl",
  "--data-parallel-rank",
  "-dpn",
  "--data-parallel-start-rank",
  "-dpr",
  "--data-parallel-address",
  "-dpa",
  "--data-parallel-backend",
  "-dpb",
  "--data-parallel-hybrid-lb",
  "--data-parallel-external-lb",
  "--config",
  "--worker-use-ray",
  "--engine-use-ray",
]);
/**
 * vLLM options that take no value, commonly written: an expansion after one of them stands where
 * an option may (`--enforce-eager $EXTRA`). After any other option an expansion is taken as its value.
 */
const VLLM_SWITCHES = new Set([
  "--trust-remote-code",
  "--enforce-eager",
  "--enable-prefix-caching",
  "--no-enable-prefix-caching",
  "--enable-chunked-prefill",
  "--no-enable-chunked-prefill",
  "--disable-log-requests",
  "--enable-log-requests",
  "--disable-log-stats",
  "--enable-auto-tool-choice",
  "--enable-lora",
  "--enable-expert-parallel",
  "--disable-custom-all-reduce",
  "--enable-reasoning",
  "--enable-sleep-mode",
  "--async-scheduling",
  "--disable-frontend-multiprocessing",
  "--disable-fastapi-docs",
  "--skip-tokenizer-init",
  "--disable-sliding-window",
  "--return-tokens-as-token-ids",
  "--enable-prompt-tokens-details",
  "--enable-server-load-tracking",
  "--enable-force-include-usage",
  "--disable-uvicorn-access-log",
  "--enable-request-id-headers",
]);

/** An option word's name as vLLM's parser reads it: `--tensor_parallel_size=2` → `--tensor-parallel-size`. */
function vllmOptionName(w: string): string {
  const name = w.split("=")[0];
  return name.startsWith("--") ? name.replace(/_/g, "-") : name;
}

/** Whether a word holds an expansion: the shell's (`$X`), compose's (`${X}`) or Kubernetes' (`$(X)`). */
const expands = (w: ShellWord) => w.expands || /\$[({A-Za-z_]/.test(w.value);

/**
 * The parallel sizes of vLLM's server arguments (the words after `vllm serve` or the module), see
 * {@link VllmParallel}. An expansion that stands where an option may (not after an option that takes
 * a value, nor the model after `serve`) may hold any option: it is recorded as `elsewhere`.
 */
function vllmParallel(args: readonly ShellWord[]): VllmParallel {
  const out: VllmParallel = { tp: null, pp: null, dp: null, elsewhere: null };
  for (let k = 0; k < args.length; k++) {
    const w = args[k];
    const prev = k > 0 ? args[k - 1].value : "";
    const isValue = prev.startsWith("-") && !prev.includes("=") && !VLLM_SWITCHES.has(vllmOptionName(prev));
    if (expands(w) && !isValue && !w.value.startsWith("-") && k > 0) out.elsewhere ??= w;
    if (!w.value.startsWith("-") || isValue) continue;
    const name = vllmOptionName(w.value);
    const eq = w.value.indexOf("=");
    const next = args[k + 1];
    const value: OptionValue | null =
      eq > 0
        ? { value: w.value.slice(eq + 1), start: w, end: w }
        : next
          ? { value: next.value, start: w, end: next }
          : null;
    if (VLLM_TP.has(name)) out.tp = value;
    else if (VLLM_PP.has(name)) out.pp = value;
    else if (VLLM_DP.has(name)) out.dp = value;
    else if (name === "--distributed-executor-backend") {
      if (value?.value !== "mp") out.elsewhere ??= w;
    } else if (VLLM_ELSEWHERE.has(name) || (expands(w) && eq < 0)) out.elsewhere ??= w;
  }
  return out;
}
