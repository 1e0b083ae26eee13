/**
 * A project shell script that a shell script runs as a new shell (`bash scripts/train.sh`, `sh
 * x.sh`, `./train.sh`): where it is and its text (GPU054: a startup variable that never reaches the
 * Python it starts; GPU040: a caller's CUDA_VISIBLE_DEVICES that its deepspeed launch drops). The
 * child gets the exported environment only (bash(1), ENVIRONMENT: "When a program is invoked it is
 * given an array of strings called the environment").
 *
 * Found as launch/script.ts {@link launchedScript} finds a launched script (beside the running
 * script, then up to three folders above it: the folder it is run from is unknown), after the
 * literal `cd` commands the running script wrote before the command ({@link workingDirectory}).
 */
import { dirname, isAbsolute, join, normalize } from "node:path";
import type { ShellCommand, ShellWord } from "../manifests/shell";
import { jobScriptFacts, type JobScriptFacts } from "../manifests/jobscript";
import { SourceText } from "../manifests/source";
import { launchedScript, SCRIPT_DIR } from "./script";

/**
 * A batch scheduler's directive at the start of a line (Slurm `#SBATCH`, PBS `#PBS`, LSF `#BSUB`,
 * Flux `#FLUX:`, Grid Engine `#$`): such a job inherits the scheduler's CUDA_VISIBLE_DEVICES,
 * already exported (bash: a variable found in the environment at start is marked for export).
 */
export const SCHEDULER_DIRECTIVE = /^#(?:SBATCH|PBS|BSUB|FLUX:|\$)\s/m;

/** Shells that run a script file as a new process (bash(1): "bash [options] [file]"). */
const SHELLS: ReadonlySet<string> = new Set(["bash", "sh", "dash", "zsh"]);

/** A project shell script that a command runs as a new shell. */
export interface ChildShellScript {
  /** The command as messages name it: `bash scripts/train.sh`, `./run.sh`. */
  command: string;
  /** The word naming the script (in the running script's text). */
  pathWord: ShellWord;
  /** Where it was read. */
  path: string;
  text: string;
  facts: JobScriptFacts;
}

/**
 * The folder that the running script's `cd` (and `pushd`) commands written before offset `before`
 * move to, in the text's order: `""` when none, a path relative to the folder the script was
 * started in (`examples/x`, `..`), or an absolute one (`cd /opt/app`, or `cd "$(dirname "$0")"`:
 * the script's own folder). Null when one of them cannot be followed (an expansion, `cd` alone or
 * `cd ~`: the home folder, `cd -`, `popd`), or when `file` is null and one names the script's folder.
 * Branches and subshells are not told apart (the text's order decides, as for exports).
 */
export function workingDirectory(
  commands: readonly ShellCommand[],
  before: number,
  file: string | null,
): string | null {
  let dir = "";
  for (const c of commands) {
    if (c.start >= before) break;
    const head = c.words[0]?.value;
    if (head === "popd") return null;
    if (head !== "cd" && head !== "pushd") continue;
    const args = c.words.slice(1).filter((w) => !/^-[LPe@]+$/.test(w.value));
    const to = args[0];
    if (!to || args.length > 1 || to.value === "-" || to.value.startsWith("~")) return null;
    let target: string;
    if (to.expands) {
      const own = SCRIPT_DIR.exec(to.value.endsWith("/") ? to.value : `${to.value}/`);
      if (!own || !file || own[1].includes("$")) return null;
      target = join(dirname(file), own[1]);
    } else target = to.value;
    dir = isAbsolute(target) ? normalize(target) : normalize(join(dir, target));
    if (dir === ".") dir = "";
  }
  return dir;
}

/**
 * The project shell script `words` run as a child process (`bash scripts/train.sh ...`, `sh x.sh`,
 * `./train.sh`; a literal `.sh` path), read through `read`; null when the words run no such script,
 * it cannot be found, or it is a batch job ({@link SCHEDULER_DIRECTIVE}).
 * @param words the command's words after any `VAR=...`/`env` prefix (commandLine.ts LaunchLine.words)
 * @param cwd where the running script's `cd` commands moved to ({@link workingDirectory}); `""` for none
 */
export function childShellScript(
  words: readonly ShellWord[],
  file: string | null,
  read: (path: string, maxBytes: number) => string | null,
  cwd = "",
): ChildShellScript | null {
  const head = words[0]?.value ?? "";
  let at = 0;
  if (SHELLS.has(head.replace(/^.*\//, ""))) {
    at = 1;
    while (words[at]?.value.startsWith("-")) {
      if (words[at].value.includes("c")) return null;
      at++;
    }
  } else if (!head.includes("/")) return null;
  const pathWord = words[at];
  if (!pathWord || pathWord.expands || !pathWord.value.endsWith(".sh")) return null;
  const path = cwd && !isAbsolute(pathWord.value) ? join(cwd, pathWord.value) : pathWord.value;
  const found = launchedScript(file, path, read, ".sh");
  if (!found || SCHEDULER_DIRECTIVE.test(found.text)) return null;
  return {
    command: words
      .slice(0, at + 1)
      .map((w) => w.raw)
      .join(" "),
    pathWord,
    path: found.path,
    text: found.text,
    facts: jobScriptFacts(new SourceText(found.text)),
  };
}
