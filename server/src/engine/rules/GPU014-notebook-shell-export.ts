import type { PythonRule } from "../rule";
import type { ShellExportEvent } from "../python/events";
import { STARTUP_VARIABLES } from "../frameworks";
import { stateBefore } from "../python/timeline";
import type { Fix } from "../types";

/** GPU014: `!export K=v` / `!K=v cmd` for a startup variable in a notebook. */
/**
 * Whether a `!` line runs a command after its leading `NAME=value` assignments
 * (`!A=1 B=2 python x.py` → true, `!A=1` → false). Words are split as POSIX sh does for the
 * simple cases: whitespace outside single or double quotes.
 */
export function runsACommand(command: string): boolean {
  const words: string[] = [];
  let cur = "",
    quote: string | null = null,
    inWord = false;
  for (const ch of command.replace(/^!/, "")) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
      continue;
    }
    if (/\s/.test(ch)) {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
      continue;
    }
    cur += ch;
    inWord = true;
  }
  if (inWord) words.push(cur);
  const rest = words.filter((_, i) => words.slice(0, i + 1).some((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)));
  return rest.length > 0;
}

export const rule: PythonRule = {
  meta: {
    code: "GPU014",
    name: "notebook-shell-export",
    severity: "warning",
    fixable: true,
    fixSafety: "both",
    // Notebook shell lines only (`!export K=v` of a startup variable: TextProbe.magicWith).
    trigger: (t) => t.magicWith(STARTUP_VARIABLES),
    docs: {
      what: "Finds notebook shell lines that set a CUDA startup variable: `!export CUDA_VISIBLE_DEVICES=1` and `!CUDA_VISIBLE_DEVICES=1 python train.py`.",
      follows:
        "The `!` lines of every code cell of the notebook, in cell order (whether CUDA was already initialised above a line decides whether the fix is safe). Not followed: `%%bash` and other cell-magic cells, shell commands run from Python (`subprocess`, `os.system`), and Python files, which have no `!` lines.",
      why: "Each `!` line runs in its own subshell, which exits when the line ends: `export` changes that subshell's environment only, and the kernel's `os.environ` never sees it. The kernel keeps using every GPU (with CUDA_VISIBLE_DEVICES unset, both GPUs of the measured machine were visible: ground-truth.md), and the next `!` line starts from the kernel's environment again. `!K=v cmd` does reach `cmd`, but nothing else: later cells and later commands run without it. IPython's `%env K=v` sets the variable in the kernel (`os.environ`), where both the kernel's own CUDA initialisation and every later `!` command see it.",
      example:
        '# cell 1\n!export CUDA_VISIBLE_DEVICES=1   # GPU014: gone when the line ends\n# cell 2\nimport torch\nx = torch.ones(1, device="cuda")  # still on physical GPU 0\n',
      fix: '# cell 1\n%env CUDA_VISIBLE_DEVICES=1\n# cell 2\nimport torch\nx = torch.ones(1, device="cuda")  # physical GPU 1\n',
      whenNotToCare:
        "`!CUDA_VISIBLE_DEVICES=1 python train.py` when you mean to pick the GPU of that one command only and the kernel does not use CUDA itself. `%env` is read when CUDA starts: if the kernel already initialised CUDA, restart it (GPU001 reports that case).",
      references: [
        "IPython documentation: 'Running shell commands' (each `!` command runs in a subshell) and the `%env` / `%set_env` magics (set os.environ in the kernel)",
        "ground-truth.md: rows `import torch` only (the variable still applies if set before CUDA initialises)",
      ],
    },
  },
  check(ctx) {
    const byLine = new Map<string, ShellExportEvent[]>();
    for (const e of ctx.model.events) {
      if (e.kind !== "shellExport") continue;
      const key = `${e.range.start.line}:${e.range.start.character}`;
      byLine.set(key, [...(byLine.get(key) ?? []), e]);
    }
    for (const line of byLine.values()) {
      // After CUDA initialised, `%env` would set the variable too late (GPU001 would report the new
      // line): the fix is then offered, but not as a safe one (not applied by Fix All).
      const frozen = line.some((e) => stateBefore(ctx.model, e).frozenBy !== null);
      const fix = envMagicFix(line, ctx.model.text, frozen);
      for (const e of line) {
        if (!STARTUP_VARIABLES.includes(e.variable)) continue;
        const { command } = splitComment(e.text);
        const exported = command.slice(1).trim().startsWith("export");
        // `!CUDA_VISIBLE_DEVICES=1 python train.py`: the assignment is for that command, which is
        // what the line means. Only a line that sets and runs nothing is lost.
        if (!exported && runsACommand(command)) continue;
        ctx.report({
          range: e.range,
          message: exported
            ? `\`${command}\` sets ${e.variable} in a subshell that ends with the line: the kernel (and every later cell and \`!\` command) never sees it; use \`%env ${e.variable}=${e.value}\``
            : `\`${command}\` sets ${e.variable} for that one command only: the kernel and later cells never see it; use \`%env ${e.variable}=${e.value}\` to set it in the kernel`,
          ...(fix ? { fix } : {}),
        });
      }
    }
  },
};

/** Splits a shell line at its comment: a word starting with `#` (bash ignores the rest of the line). */
function splitComment(shell: string): { command: string; comment: string | null } {
  const m = /\s#/.exec(shell);
  return m
    ? { command: shell.slice(0, m.index).trimEnd(), comment: shell.slice(m.index).trim() }
    : { command: shell, comment: null };
}

/**
 * Replaces the shell line by `%env K=v` lines (one per variable it sets), followed by the command
 * when the line ran one (`!K=v cmd` → `%env K=v` + `!cmd`). Null when a value needs the shell
 * (quotes, `$`, backquotes, spaces) and %env would not set the same string. Safe only when the
 * line runs no command and CUDA is not yet initialised above it (`frozen`: the new `%env` line
 * would have no effect, a new GPU001).
 */
function envMagicFix(line: ShellExportEvent[], text: string, frozen: boolean): Fix | null {
  const first = line[0];
  const { command: shell, comment } = splitComment(first.text);
  const words = shell.slice(1).trim().split(/\s+/);
  const assignments = words[0] === "export" ? words.slice(1) : words.slice(0, line.length);
  const command = words[0] === "export" ? [] : words.slice(line.length);
  if (assignments.length !== line.length || (words[0] === "export" && assignments.some((w) => !w.includes("="))))
    return null;
  if (line.some((e) => !/^[A-Za-z0-9_.,:\-/+@%]*$/.test(e.value))) return null;
  if (/[;&|<>`$()]/.test(shell)) return null;
  const eol = /\r\n/.test(text) ? "\r\n" : "\n";
  const indent = " ".repeat(first.range.start.character);
  // %env takes the rest of its line as the value, so a shell comment moves to a line of its own.
  const lines = [...(comment ? [comment] : []), ...line.map((e) => `%env ${e.variable}=${e.value}`)];
  if (command.length) lines.push(`!${command.join(" ")}`);
  return {
    title:
      line.length === 1
        ? `Use %env ${first.variable}=${first.value}`
        : `Use %env for ${line.map((e) => e.variable).join(", ")}`,
    edits: [{ range: first.range, newText: lines.join(eol + indent) }],
    safe: command.length === 0 && !frozen,
    note: "%env sets the variable in the kernel; restart the kernel first if CUDA was already initialised.",
  };
}
