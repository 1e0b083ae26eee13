/**
 * Where launch command lines are written and what each one runs with: the launches of a shell or
 * job script, of a Dockerfile's `CMD`/`ENTRYPOINT`, of a compose service's `command`/`entrypoint`,
 * and of a Kubernetes container's `command`/`args`, each with the CUDA_VISIBLE_DEVICES in force for
 * it and the GPUs its container or job asks for. commandLine.ts parses each command line.
 *
 * What is followed: a `VAR=v cmd` / `env VAR=v cmd` prefix; an `export VAR=v` (or `declare -x`)
 * earlier in the same script; a Dockerfile `ENV` earlier in the last stage; a compose service's
 * `environment`; a container's `env`; `sh -c '...'` / `bash -c '...'` with a literal script; the
 * arguments of a container whose image's ENTRYPOINT is vLLM's server (`vllm/vllm-openai` with a
 * compose `command` and no `entrypoint`, Kubernetes `args` and no `command`, the words after the
 * image of a shell script's `docker run --gpus ...`), as that server's launch.
 * Also followed: the once-assigned literals of a file the script sources (`source env.sh`:
 * {@link literalsWithSourced}, for GPU040), and a launcher's options given through such a literal
 * (`accelerate launch $EXTRA ...` with `EXTRA="--multi_gpu"`: the words it splits into) or a
 * once-assigned array (`torchrun "${ARGS[@]}" train.py`); one that is not known leaves the
 * launcher's options unknown (commandLine.ts LaunchLine.unknownOptions).
 * What is not: variables set by the caller or in a script that is run rather than sourced, a value that expands a variable
 * (`CUDA_VISIBLE_DEVICES=$GPUS`), a bare `VAR=v` line without `export` (the variable reaches the
 * launcher only if the caller had exported it: unknown, so nothing is concluded).
 */
import type { Node, YAMLMap } from "yaml";
import type { ManifestModel } from "../manifests/model";
import type { Range } from "../types";
import { SourceText } from "../manifests/source";
import { exportOperands, parseShell, type ShellCommand, type ShellWord } from "../manifests/shell";
import { isMap, isScalar, isSeq, pairOf, scalarText, valueAt, valueOf } from "../manifests/yaml";
import { isVllmServerImage, parseLaunchLine, vllmServerArgs, wholeNumber, type LaunchLine } from "./commandLine";
import { dirname, isAbsolute, join } from "node:path";
import { expandedWords, jobScriptFacts, type JobScriptFacts, type ShellVariables } from "../manifests/jobscript";
import { containerRun, gpusExposed } from "./containerRun";

/** A CUDA_VISIBLE_DEVICES value in force for a launch. */
export interface VisibleSetting {
  /** The value as written; null when it expands a variable or is otherwise not literal. */
  value: string | null;
  /** Where it is set, for messages: `inline`, `exported on line 3`, `the image's ENV`, `service "x"`. */
  from: string;
  /** Set for this command alone (inline prefix) or in the same container spec: its effect is certain. */
  sameCommand: boolean;
  range: Range;
}

/** The GPUs a container or a job asks for, per node. */
export interface GpuRequest {
  count: number;
  /** For messages: `nvidia.com/gpu: 2`, `count: 2`, `device_ids: [0, 1]`, `#SBATCH --gres=gpu:4`. */
  from: string;
  range: Range;
  kind: "container" | "slurm";
}

/** One launch found in a manifest, with what it runs under. */
export interface FoundLaunch {
  line: LaunchLine;
  /** The range of the command (for a finding without a better word). */
  range: Range;
  /** CUDA_VISIBLE_DEVICES in force; null when none is set as far as the file says. */
  visible: VisibleSetting | null;
  /** A CUDA_VISIBLE_DEVICES assignment that may or may not reach the launch (not exported, not literal): nothing is concluded. */
  visibleUnknown: boolean;
  /** The container's or job's GPU request; null when none. */
  request: GpuRequest | null;
  /** The machine's GPU count applies (a plain shell script run where it is linted: pre-commit, CI, the editor). */
  onThisMachine: boolean;
  /** Where it is written, for messages: `the script`, `CMD`, `service "train"`, `container "t" of Job "x"`. */
  where: string;
}

const CVD = "CUDA_VISIBLE_DEVICES";
const isShell = (w: string) => /^(?:.*\/)?(?:ba|da|z)?sh$/.test(w);

/** Shell words whose offsets are moved by `delta`, or all set to `clamp` when the text's offsets do not map onto the file. */
function moveWords(words: readonly ShellWord[], delta: number, clamp: [number, number] | null): ShellWord[] {
  return words.map((w) =>
    clamp ? { ...w, start: clamp[0], end: clamp[1] } : { ...w, start: w.start + delta, end: w.end + delta },
  );
}

/** Commands of a shell text written at `offset` in the file (`exact`: its characters are the file's, else every word spans `clamp`). */
function commandsOf(text: string, offset: number, exact: boolean, clamp: [number, number]): ShellCommand[] {
  const script = parseShell(new SourceText(text));
  return script.commands.map((c) => ({
    ...c,
    words: moveWords(c.words, offset, exact ? null : clamp),
    assignments: c.assignments.map((a) => ({ ...a, word: moveWords([a.word], offset, exact ? null : clamp)[0] })),
    start: exact ? c.start + offset : clamp[0],
    end: exact ? c.end + offset : clamp[1],
  }));
}

/**
 * The launch lines of an argv (exec form): the argv itself, or, for `sh -c SCRIPT` / `bash -lc
 * SCRIPT`, each command of the script.
 * @param scriptAt where the script word's text lies in the file: its start offset when the file holds it character for character, else null.
 */
function launchesOfArgv(
  argv: ShellWord[],
  scriptAt: (w: ShellWord) => number | null,
): Array<{ line: LaunchLine; command: ShellCommand }> {
  if (argv.length >= 3 && isShell(argv[0].value)) {
    const c = argv.findIndex((w, i) => i > 0 && /^-[a-z]*c[a-z]*$/.test(w.value));
    const script = c > 0 ? argv[c + 1] : undefined;
    if (!script) return [];
    const at = scriptAt(script);
    return commandsOf(script.value, at ?? 0, at !== null, [script.start, script.end]).map((command) => ({
      line: parseLaunchLine(command.words, command.assignments),
      command,
    }));
  }
  const command: ShellCommand = {
    assignments: [],
    words: argv,
    start: argv[0]?.start ?? 0,
    end: argv[argv.length - 1]?.end ?? 0,
  };
  return [{ line: parseLaunchLine(argv), command }];
}

/** A CUDA_VISIBLE_DEVICES setting of a script's commands before `before` (the last one wins): `export`/`declare -x`, or a bare assignment (unknown). */
export function scriptVisible(
  src: SourceText,
  commands: readonly ShellCommand[],
  before: number,
): { visible: VisibleSetting | null; unknown: boolean } {
  let visible: VisibleSetting | null = null;
  let unknown = false;
  let assigned: { value: string | null; word: ShellWord } | null = null;
  for (const c of commands) {
    if (c.start >= before) break;
    if (c.words.length === 0) {
      for (const a of c.assignments)
        if (a.name === CVD) {
          assigned = { value: a.word.expands ? null : a.value, word: a.word };
          unknown = true;
          visible = null;
        }
      continue;
    }
    const head = c.words[0].value;
    const exported = exportOperands(c);
    if (head === "unset" && c.words.some((w) => w.value === CVD)) {
      visible = null;
      unknown = false;
      assigned = null;
      continue;
    }
    for (const w of exported ?? []) {
      if (w.value === CVD && assigned) {
        visible = {
          value: assigned.value,
          from: `exported on line ${src.lineOf(assigned.word.start) + 1}`,
          sameCommand: false,
          range: src.range(assigned.word.start, assigned.word.end),
        };
        unknown = assigned.value === null;
      } else if (w.value.startsWith(`${CVD}=`)) {
        const value = w.expands ? null : w.value.slice(CVD.length + 1);
        visible = {
          value,
          from: `exported on line ${src.lineOf(w.start) + 1}`,
          sameCommand: false,
          range: src.range(w.start, w.end),
        };
        unknown = value === null;
      }
    }
  }
  return { visible: visible && visible.value !== null ? visible : null, unknown };
}

/**
 * The CUDA_VISIBLE_DEVICES in force for one command of a shell or job script: its inline prefix
 * (`VAR=v cmd`, `env VAR=v cmd`), else the last `export` before it (none after `env -i`); `unknown`
 * when an assignment may or may not reach it (not exported, or not literal).
 */
export function visibleForCommand(
  model: ManifestModel,
  c: ShellCommand,
  line: LaunchLine = parseLaunchLine(c.words, c.assignments),
): { visible: VisibleSetting | null; unknown: boolean } {
  const src = model.src;
  const inline = line.inlineEnv.get(CVD);
  if (inline) {
    return inline.word.expands
      ? { visible: null, unknown: true }
      : {
          visible: {
            value: inline.value,
            from: "inline",
            sameCommand: true,
            range: src.range(inline.word.start, inline.word.end),
          },
          unknown: false,
        };
  }
  if (line.clearsEnv || !model.jobscript) return { visible: null, unknown: false };
  return scriptVisible(src, model.jobscript.commands, c.start);
}

/**
 * The words of a command with each expansion of a known variable whose words are options
 * (`$EXTRA` with `EXTRA="--multi_gpu --mixed_precision bf16"`: the first starts with `-`; or
 * `"${ARGS[@]}"` of a once-assigned array; or an empty value) put in as bash's word splitting makes
 * them (manifests/jobscript.ts `expandedWords`); every other word as it is. A launcher's options
 * given through a variable then count as options, not as the script.
 */
function expandOptionWords(words: readonly ShellWord[], vars: ShellVariables): readonly ShellWord[] {
  if ((!vars.literals.size && !vars.arrays?.size) || !words.some((w) => w.expands)) return words;
  const out: ShellWord[] = [];
  for (const w of words) {
    const put = expandedWords(w, vars);
    if (put && (put.length === 0 || put[0].value.startsWith("-"))) out.push(...put);
    else out.push(w);
  }
  return out;
}

/**
 * The launches of a shell script or Slurm job script (every command; the launcher decides which are read).
 * @param literals the literals the script sees (launch/sources.ts {@link literalsWithSourced}); its own by default
 */
function scriptLaunches(model: ManifestModel, literals?: ReadonlyMap<string, string>): FoundLaunch[] {
  const facts = model.jobscript;
  if (!facts) return [];
  const src = model.src;
  const isJob = facts.directives.length > 0;
  const out: FoundLaunch[] = [];
  for (const c of facts.commands) {
    const line = parseLaunchLine(
      expandOptionWords(c.words, { literals: literals ?? facts.literals, arrays: facts.arrays }),
      c.assignments,
    );
    if (line.launcher === "other") {
      const run = vllmContainerRun(model, c, !isJob);
      if (run) out.push(run);
      continue;
    }
    const { visible, unknown } = visibleForCommand(model, c, line);
    let request: GpuRequest | null = null;
    if (isJob) {
      const req = facts.request;
      const l = line.underSrun;
      if (req.asksForGpus && req.where) {
        const count =
          l && req.gpusPerTask !== null ? req.gpusPerTask : !l && req.gpusPerTask !== null ? null : req.gpusPerNode;
        if (count !== null)
          request = {
            count,
            from: `#SBATCH --${req.where.name}=${req.where.value}`,
            range: req.where.range,
            kind: "slurm",
          };
      }
    }
    out.push({
      line,
      range: src.range(c.start, c.end),
      visible,
      visibleUnknown: unknown,
      request,
      onThisMachine: !isJob,
      where: "the script",
    });
  }
  return out;
}

/** A first word of a container's arguments that names a program, not an option of the image's server. */
const PROGRAM = /^(?:.*\/)?(?:python[0-9.]*|vllm|(?:ba|da|z)?sh)$/;

/**
 * `docker run --gpus ... vllm/vllm-openai ARGS` (also podman, nerdctl; launch/containerRun.ts):
 * the image's server with ARGS, without `--entrypoint`. Its GPUs: `--gpus N` or `device=...` (a
 * request), or every GPU of the machine for `--gpus all` in a plain shell script; a `-e
 * CUDA_VISIBLE_DEVICES=...` with a literal value is in force inside. Null for any other command,
 * a run without `--gpus`, or `--gpus` ids held in a variable.
 */
function vllmContainerRun(model: ManifestModel, c: ShellCommand, plainScript: boolean): FoundLaunch | null {
  const run = containerRun(c);
  if (!run?.image || run.entrypoint || !run.gpus || !isVllmServerImage(run.image.value)) return null;
  if (!run.args.length || PROGRAM.test(run.args[0].value) || run.gpus.word.expands) return null;
  const n = gpusExposed(run.gpus.value);
  if (n !== null && Number.isNaN(n)) return null;
  const src = model.src;
  const env = run.env;
  const literal = env && !env.fromHost && env.value !== null && !env.word.expands ? env.value : null;
  return {
    line: vllmServerArgs(run.args),
    range: src.range(c.start, c.end),
    visible:
      literal !== null && env
        ? { value: literal, from: "docker run -e", sameCommand: true, range: src.range(env.word.start, env.word.end) }
        : null,
    visibleUnknown: !!env && literal === null,
    request:
      n === null
        ? null
        : {
            count: n,
            from: `--gpus ${run.gpus.value}`,
            range: src.range(run.gpus.word.start, run.gpus.word.end),
            kind: "container",
          },
    onThisMachine: plainScript && n === null,
    where: "docker run",
  };
}

/** The launches of a Dockerfile's last stage: `ENTRYPOINT` (exec form) followed by `CMD`, or either alone. */
function dockerfileLaunches(model: ManifestModel): FoundLaunch[] {
  const df = model.dockerfile;
  if (!df || !df.run) return [];
  const src = model.src;
  const { argv, shellForm, start, end } = df.run;
  const found = shellForm
    ? commandsOf(src.text.slice(start, end), start, true, [start, end]).map((command) => ({
        line: parseLaunchLine(command.words, command.assignments),
        command,
      }))
    : launchesOfArgv(argv, () => null);
  const env = df.env
    .filter((e) => e.name === CVD && e.range.start.line >= df.run!.stageLine && e.range.start.line < df.run!.line)
    .pop();
  return found
    .filter((f) => f.line.launcher !== "other")
    .map(({ line, command }) => {
      const inline = line.inlineEnv.get(CVD);
      const visible: VisibleSetting | null =
        inline && !inline.word.expands
          ? {
              value: inline.value,
              from: "inline",
              sameCommand: true,
              range: src.range(inline.word.start, inline.word.end),
            }
          : env && env.value !== null && !env.value.includes("$") && !line.clearsEnv
            ? { value: env.value, from: "the image's ENV", sameCommand: false, range: env.range }
            : null;
      return {
        line,
        range: src.range(command.start, command.end),
        visible,
        visibleUnknown: !!inline?.word.expands,
        request: null,
        onThisMachine: false,
        where: df.run!.keyword,
      };
    });
}

/** The words of a YAML `command`/`args`/`entrypoint` value: a list of scalars (each a word) or a string (split as a shell would). */
function yamlArgv(
  src: SourceText,
  node: Node | null,
): { argv: ShellWord[]; scriptAt: (w: ShellWord) => number | null } | null {
  if (!node) return null;
  const starts = new Map<ShellWord, number>();
  const wordOf = (n: unknown): ShellWord | null => {
    const text = scalarText(n);
    const r = (n as Node).range;
    if (text === null || !r) return null;
    const w: ShellWord = { raw: src.text.slice(r[0], r[1]), value: text, start: r[0], end: r[1], expands: false };
    // The scalar's characters are the file's when it is plain, or single-line quoted without escapes.
    const raw = w.raw;
    if (raw === text) starts.set(w, r[0]);
    else if ((raw.startsWith("'") || raw.startsWith('"')) && raw.slice(1, -1) === text) starts.set(w, r[0] + 1);
    return w;
  };
  if (isSeq(node)) {
    const argv = node.items.map(wordOf);
    if (argv.some((w) => w === null)) return null;
    return { argv: argv as ShellWord[], scriptAt: (w) => starts.get(w) ?? null };
  }
  const w = wordOf(node);
  if (!w) return null;
  const at = starts.get(w);
  const cmds = commandsOf(w.value, at ?? 0, at !== undefined, [w.start, w.end]);
  if (!cmds.length) return null;
  return { argv: at === undefined ? locateWords(src, cmds[0].words, w) : cmds[0].words, scriptAt: () => null };
}

/**
 * The words of a scalar whose characters are not the file's (a folded or literal block scalar,
 * `command: >` over several lines), each put where its text is found in the scalar's source, in
 * order: a block scalar has no escapes, so a word's text is written there as it is (folding only
 * turns line breaks into spaces between words). A word not found keeps the scalar's whole range.
 */
function locateWords(src: SourceText, words: readonly ShellWord[], scalar: ShellWord): ShellWord[] {
  let from = scalar.start;
  return words.map((w) => {
    const i = w.raw ? src.text.indexOf(w.raw, from) : -1;
    if (i < 0 || i + w.raw.length > scalar.end) return w;
    from = i + w.raw.length;
    return { ...w, start: i, end: i + w.raw.length };
  });
}

/** CUDA_VISIBLE_DEVICES set in a container's or service's environment (model.env, by owner). */
function envVisible(model: ManifestModel, owner: string): VisibleSetting | null {
  const e = model.env.filter((x) => x.owner === owner && x.name === CVD).pop();
  if (!e || e.value === null || e.value.includes("$")) return null;
  return { value: e.value, from: owner, sameCommand: true, range: e.range };
}

/** GPUs a compose service reserves: `count: N` or `device_ids` of its GPU device reservations; null when none or `all`. */
function composeRequest(model: ManifestModel, service: YAMLMap): GpuRequest | null {
  const devices = valueAt(service, ["deploy", "resources", "reservations", "devices"]);
  if (!isSeq(devices)) return null;
  for (const d of devices.items) {
    if (!isMap(d)) continue;
    const caps = valueOf(d, "capabilities");
    const gpu =
      (isSeq(caps) && caps.items.some((c) => scalarText(c) === "gpu")) || scalarText(valueOf(d, "driver")) === "nvidia";
    if (!gpu) continue;
    const count = pairOf(d, "count");
    const ids = pairOf(d, "device_ids");
    const r = (n: Node | null | undefined) => model.src.range(n?.range?.[0] ?? 0, n?.range?.[1] ?? 0);
    if (ids && !count && isSeq(ids.value)) {
      const list = ids.value.items.map((i) => scalarText(i) ?? "?");
      // `device_ids: ['0,1,2,3']`: the ids reach the runtime joined with commas, so one entry may name
      // several GPUs; not counted.
      if (list.some((i) => i.includes(","))) return null;
      return {
        count: list.length,
        from: `device_ids: [${list.join(", ")}]`,
        range: r(ids.value as Node),
        kind: "container",
      };
    }
    const n =
      isScalar(count?.value) && typeof count!.value.value === "number" && Number.isInteger(count!.value.value)
        ? count!.value.value
        : null;
    if (count && !ids && n !== null)
      return { count: n, from: `count: ${n}`, range: r(count.value as Node), kind: "container" };
    return null;
  }
  return null;
}

/** GPUs a pod container asks for: `resources.limits["nvidia.com/gpu"]`, a whole number. */
export function podRequest(model: ManifestModel, container: YAMLMap): GpuRequest | null {
  const limit = valueAt(container, ["resources", "limits"]);
  const p = pairOf(limit, "nvidia.com/gpu");
  const n = wholeNumber(scalarText(p?.value));
  if (!p || n === null) return null;
  const v = p.value as Node;
  return {
    count: n,
    from: `nvidia.com/gpu: ${n}`,
    range: model.src.range(v.range?.[0] ?? 0, v.range?.[1] ?? 0),
    kind: "container",
  };
}

/**
 * The launch of a container whose image's ENTRYPOINT is vLLM's server (launch/commandLine.ts
 * `isVllmServerImage`) and whose spec gives only the arguments (`args`, compose's `command`), or null.
 */
function serverArgsLaunch(
  model: ManifestModel,
  args: Node | null,
  owner: string,
  request: GpuRequest | null,
): FoundLaunch | null {
  const argv = yamlArgv(model.src, args)?.argv;
  // A first word that names a program (`python -m ...`, `vllm serve`, `sh -c`) was meant to run as
  // one, but reaches the image's server as its model: another mistake, not judged here.
  if (!argv?.length || PROGRAM.test(argv[0].value)) return null;
  return {
    line: vllmServerArgs(argv),
    range: model.src.range(argv[0].start, argv[argv.length - 1].end),
    visible: envVisible(model, owner),
    visibleUnknown: false,
    request,
    onThisMachine: false,
    where: owner,
  };
}

/** Launches of YAML argv pieces joined (`entrypoint` + `command`, `command` + `args`). */
function containerLaunches(
  model: ManifestModel,
  parts: Array<Node | null>,
  owner: string,
  where: string,
  request: GpuRequest | null,
): FoundLaunch[] {
  const src = model.src;
  const pieces = parts.map((p) => yamlArgv(src, p)).filter((p): p is NonNullable<typeof p> => p !== null);
  if (!pieces.length) return [];
  const argv = pieces.flatMap((p) => p.argv);
  const scriptAt = (w: ShellWord) => pieces.map((p) => p.scriptAt(w)).find((x) => x !== null) ?? null;
  const containerVisible = envVisible(model, owner);
  return launchesOfArgv(argv, scriptAt)
    .filter((f) => f.line.launcher !== "other")
    .map(({ line, command }) => {
      const inline = line.inlineEnv.get(CVD);
      const visible =
        inline && !inline.word.expands
          ? {
              value: inline.value,
              from: "inline",
              sameCommand: true,
              range: src.range(inline.word.start, inline.word.end),
            }
          : line.clearsEnv
            ? null
            : containerVisible;
      return {
        line,
        range: src.range(command.start, command.end),
        visible,
        visibleUnknown: !!inline?.word.expands,
        request,
        onThisMachine: false,
        where,
      };
    });
}

/**
 * Every launch a manifest writes, with the environment and GPU request it runs under. Never throws
 * for a model built by manifests/model.ts.
 */
export function launchesOf(model: ManifestModel, literals?: ReadonlyMap<string, string>): FoundLaunch[] {
  if (model.kind === "jobscript") return scriptLaunches(model, literals);
  if (model.kind === "dockerfile") return dockerfileLaunches(model);
  const out: FoundLaunch[] = [];
  for (const s of model.services) {
    const owner = `service "${s.name}"`;
    // Compose: `entrypoint` overrides the image's ENTRYPOINT, `command` its CMD (its arguments).
    if (isVllmServerImage(scalarText(valueOf(s.node, "image"))) && !valueOf(s.node, "entrypoint")) {
      const f = serverArgsLaunch(model, valueOf(s.node, "command"), owner, composeRequest(model, s.node));
      if (f) out.push(f);
      continue;
    }
    out.push(
      ...containerLaunches(
        model,
        [valueOf(s.node, "entrypoint"), valueOf(s.node, "command")],
        owner,
        owner,
        composeRequest(model, s.node),
      ),
    );
  }
  for (const c of model.containers) {
    const owner = `container${c.name === null ? "" : ` "${c.name}"`} of ${c.owner}`;
    // Kubernetes: `command` replaces the image's ENTRYPOINT, `args` its CMD.
    if (isVllmServerImage(scalarText(valueOf(c.node, "image"))) && !valueOf(c.node, "command")) {
      const f = serverArgsLaunch(model, valueOf(c.node, "args"), owner, podRequest(model, c.node));
      if (f) out.push(f);
      continue;
    }
    out.push(
      ...containerLaunches(
        model,
        [valueOf(c.node, "command"), valueOf(c.node, "args")],
        owner,
        owner,
        podRequest(model, c.node),
      ),
    );
  }
  return out;
}

/** The largest file a script sources that is read for its literals (an environment file, not a program). */
const MAX_SOURCED_BYTES = 256 * 1024;

/**
 * The once-assigned literals a shell script sees: those of the files it sources first
 * (`source env.sh`, `. ./env.sh` with a literal path, relative to the script's folder; each file
 * read once, through the workspace reader, at most 256 KB, not followed further), then its own,
 * which win. A name the script assigns in any other way (twice, or from an expansion) is not known,
 * whatever a sourced file says. A sourced file that is missing or unreadable adds nothing (`[ -f local.sh ] && source
 * local.sh` for an optional override). bash(1), SHELL BUILTIN COMMANDS: "source filename: Read and
 * execute commands from filename in the current shell environment".
 * @param file the script's path; null (an unsaved buffer) gives its own literals only
 * @param read how the sourced files are read (ManifestRuleContext.read: they become dependencies)
 */
export function literalsWithSourced(
  file: string | null,
  facts: JobScriptFacts,
  read: (path: string, maxBytes: number) => string | null,
): Map<string, string> {
  if (!file) return facts.literals;
  const out = new Map<string, string>();
  const seen = new Set<string>();
  for (const c of facts.commands) {
    const w = c.words;
    if (w.length !== 2 || (w[0].value !== "source" && w[0].value !== ".") || w[1].expands) continue;
    const path = isAbsolute(w[1].value) ? w[1].value : join(dirname(file), w[1].value);
    if (seen.has(path)) continue;
    seen.add(path);
    const text = read(path, MAX_SOURCED_BYTES);
    if (text === null) continue;
    for (const [k, v] of jobScriptFacts(new SourceText(text)).literals) if (!facts.assigned.has(k)) out.set(k, v);
  }
  for (const [k, v] of facts.literals) out.set(k, v);
  return out;
}
