/**
 * The sound text prefilter of Python files and notebooks: each Python rule's `meta.trigger`
 * (rule.ts `PythonTrigger`) is a cheap test on the raw text that every file the rule can report on
 * passes. A file none of whose enabled rules passes is not parsed at all; a file that passes runs
 * only the rules that passed (on a large tree such as python3-torch's, only a fraction of the files
 * mention anything a rule looks at). The tests themselves live with their rules and ask a
 * {@link TextProbe} (textProbe.ts, which says why its primitives are sound); this module only reads
 * the registry.
 *
 * In a notebook, `text` is its code cells joined with the IPython lines blanked, and the probe is
 * made with the variables those lines write (their only events: `%env`/`!export` writes), so a rule
 * about a variable runs when a magic writes it. The soundness of every trigger is tested on every
 * fixture, shared case, example and verify program (test/unit/server/engine/prefilter.test.ts), and the
 * benchmark compares the prefiltered and the full output on the whole corpus.
 */
import { TextProbe } from "./textProbe";
import { ruleByCode } from "./rules/index";
import { isPythonRule } from "./rule";

/** What the linter knows about the file's surroundings, against a rule's `meta.needs`. */
export interface PrefilterFacts {
  /** The machine's GPUs are known (GPU017 runs only then). */
  machineKnown: boolean;
  /** A job script of the project starts the file (GPU036, GPU037 run only then). */
  slurmLaunched?: boolean;
  /** A script of the project starts the file, or another file around it, with the local rank as an argument (GPU044 runs only then). */
  localRankArg?: boolean;
  /** A job or shell script of the project starts the file on several nodes (GPU039's default check). */
  severalNodes?: boolean;
  /** A job or shell script of the project starts another file on several nodes, which may import this one (GPU039's default check). */
  importerOnSeveralNodes?: boolean;
  /** A shell or job script of the project starts the file with a literal CUDA_VISIBLE_DEVICES (GPU064 runs only then). */
  visibleLaunched?: boolean;
  /**
   * A job script of the project starts the file, or another file of the project, in srun tasks that
   * share a node's GPUs (slurmLaunch.ts `tasksShareGpus`; GPU074's default check runs only then).
   */
  sharedGpuTasks?: boolean;
  /** The file is a test module (LintOptions.testModule: GPU039's init_process_group check skips it). */
  testModule?: boolean;
  /** Preview checks run (a rule's trigger may be wider with preview on). */
  preview?: boolean;
  /**
   * The names of the project's functions that write a startup variable before they initialise
   * anything (python/project.ts `writerNames`; asked only by a trigger that needs them): a file
   * that calls one may set it too late (GPU001). Absent without a project index.
   */
  projectWriters?: () => ReadonlySet<string>;
}

/**
 * The rules worth running on a Python file's text, among the codes `enabled`; `probe` a probe of
 * `text` (the editor passes one made with {@link TextProbe.after} from the previous version's). A
 * rule whose `meta.needs` is not met is left out; a code that names no Python rule is kept.
 */
export function candidateRules(
  text: string,
  enabled: readonly string[],
  opts: PrefilterFacts,
  probe = new TextProbe(text),
): Set<string> {
  const out = new Set<string>();
  for (const code of enabled) {
    const rule = ruleByCode(code);
    if (!rule || !isPythonRule(rule)) {
      out.add(code);
      continue;
    }
    const { needs, trigger } = rule.meta;
    if (needs === "machine" && !opts.machineKnown) continue;
    if (needs === "slurm" && !opts.slurmLaunched) continue;
    if (needs === "localRankArg" && !opts.localRankArg) continue;
    if (needs === "visibleLaunch" && !opts.visibleLaunched) continue;
    if (trigger(probe, !!opts.preview, opts)) out.add(code);
  }
  return out;
}
