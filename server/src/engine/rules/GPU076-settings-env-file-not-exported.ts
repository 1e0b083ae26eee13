import { basename, dirname, join, relative, resolve } from "node:path";
import { readdirSync, statSync } from "node:fs";
import type { ManifestRule, ManifestRuleContext } from "../rule";
import { STARTUP_VARIABLES } from "../frameworks";
import { isComposeName, isDockerfileName } from "../manifests/files";
import { parseShell } from "../manifests/shell";
import { SourceText } from "../manifests/source";
import { namesFile, settingsFacts, type EnvFileName, type ModuleExports } from "./shared/settingsEnvFile";

const PYDANTIC_SETTINGS = "pydantic/pydantic-settings@d26fc0c3944fe68cf169f86386988bb83e3df2d8";
const PYDANTIC_V1 = "pydantic/pydantic@a913c37560f58ebe811a3b176203118a339d69f8";
const PYTHON_DOTENV = "theskumar/python-dotenv@002bfb667eb6bb3229a9b571d62dcd166491b2ad";

/** How many Python files, and other project files, of the project are read (nearest folders first). */
const MAX_MODULES = 400;
const MAX_OTHER_FILES = 400;
const MAX_MODULE_BYTES = 1024 * 1024;
const MAX_OTHER_BYTES = 256 * 1024;

/** GPU076: a CUDA startup variable in a dotenv file that only a pydantic `BaseSettings` class reads. */
export const rule: ManifestRule = {
  meta: {
    code: "GPU076",
    name: "settings-env-file-not-exported",
    severity: "warning",
    fixable: false,
    dotenv: true,
    // Reads dotenv files only (files.ts `dotenv`, which the YAML prefilter never sees).
    trigger: () => false,
    docs: {
      what: "Finds a CUDA startup variable (`CUDA_VISIBLE_DEVICES`, `CUDA_DEVICE_ORDER`, `PYTORCH_CUDA_ALLOC_CONF`, `XLA_PYTHON_CLIENT_PREALLOCATE`, ...) set in a dotenv file that a pydantic `BaseSettings` class of the project names as its `env_file`, where nothing in the project exports that file to the process environment. pydantic-settings (and pydantic 1's BaseSettings) reads the file into a dict that fills the settings object's fields; it never writes `os.environ`, so CUDA, PyTorch, JAX and TensorFlow, which read these variables from the process environment, never see the value. Reported on the variable's line in the dotenv file, with the `env_file` as a related location. In the default set for a dotenv file with another name than `.env` (`local.env`, `.env.prod`); for a file named `.env`, a preview finding: VS Code's Python extension (its `python.envFile` setting defaults to `${workspaceFolder}/.env`) and pipenv load that name into the environment of the programs they start.",
      follows:
        "The dotenv file's lines (`KEY=value`, `export KEY=value`, quoted values; comments and lines inside a multi-line quoted value skipped; an empty value is not reported). The project: the nearest folder holding `.git` among the dotenv file's folder and its ancestors (three levels at most), else the file's own folder, walked five folder levels deep (5000 files at most; hidden folders left out but `.devcontainer`, `.vscode`, `.idea`, `.github` and `.circleci`, and `node_modules`, `venv`, `site-packages`, `build`, `dist`). Its Python files (the first 400): their classes that derive from an imported `BaseSettings` (`pydantic_settings`, `pydantic`, `pydantic.v1`), with `env_file` in `class Config:` or in `model_config = SettingsConfigDict(...)` (or a dict literal), and the `_env_file=` keyword where the module instantiates such a class; the path is a string literal, a tuple or list of them, or `find_dotenv(\"name\")` (`find_dotenv()`: `.env`), and names the file when, resolved against the module's folder or one of its ancestors, it is the file. Silent when anything in the project may export the file: a `load_dotenv(...)` call naming it (or not naming a file by a literal; `load_dotenv()` names `.env`), `dotenv_values(...)` in a module that also uses `os.environ`, `os.environ.update(...)` with anything but a dict literal, `os.environ[key] = ...`, `os.putenv(key, ...)` or `os.environ.setdefault(key, ...)` with a key that is not a string literal, `os.environ |= ...`, a child process's `env=` built with `**mapping` of anything but os.environ or from `.model_dump()`/`.dict()`; for one variable, a write of it to `os.environ` or a read of an attribute of its name in any case (`settings.cuda_visible_devices`), or of the settings field that `Field(alias=...)`, `validation_alias=` or `env=` ties to it (`settings.gpus`): the project uses the setting itself; a shell script, Makefile, justfile, Procfile, `package.json`, Dockerfile, YAML file (compose `env_file:`, a CI workflow), TOML, INI, `.cfg`, `.conf`, systemd `.service` or XML file (a PyCharm run configuration in `.idea`) that names the file outside a comment, a Markdown line that names it with `source`, `set -a`, `--env-file`, `export $(`, `env $(`, `xargs` or `dotenv`, and a `.envrc` or a Dev Container or VS Code configuration (`devcontainer.json`, `launch.json`, `settings.json`) that names it (`.envrc`: or says `dotenv`, for `.env`); for `.env`, also a `Pipfile` or `Procfile` (pipenv and honcho load `.env`). Not followed: settings classes that derive from the project's own subclass of BaseSettings, a non-literal path (`Path(__file__).parent / \".env\"`), files deeper than five folders below the project root, and the environment of a launcher outside the project (a user-level `python.envFile`, a CI secret).",
      why: `pydantic-settings reads a dotenv file with python-dotenv's \`dotenv_values\`, which parses it into a dict, and merges that dict into the values of the settings fields; nothing in the package writes \`os.environ\` (${PYDANTIC_SETTINGS} pydantic_settings/sources/providers/dotenv.py:76-85 \`_static_read_env_file\`: \`file_vars = dotenv_values(file_path, ...)\`, :99-119 \`_read_env_files\` returns the merged dict; the package only reads os.environ: sources/providers/env.py:94, utils.py:14). pydantic 1 did the same (${PYDANTIC_V1} pydantic/env_settings.py:44-85 \`_build_environ\` merges \`read_env_file(...)\` into a local dict, :125-135 \`read_env_file\` calls \`dotenv_values\`). python-dotenv's \`dotenv_values\` returns the parsed dict; only \`load_dotenv\` (\`DotEnv.set_as_environment_variables\`: \`os.environ[k] = v\`) exports (${PYTHON_DOTENV} src/dotenv/main.py, \`dotenv_values\`, \`load_dotenv\`). The CUDA driver reads \`CUDA_VISIBLE_DEVICES\` and \`CUDA_DEVICE_ORDER\` from the process environment when it initialises (CUDA C Programming Guide, CUDA Environment Variables), PyTorch its allocator settings and XLA its client settings likewise, so a value that only reached a settings object changes nothing: VikParuchuri/tabled#12, \`CUDA_VISIBLE_DEVICES=1\` in the local.env of a pydantic-settings class left the models on GPU 0; the maintainer's answer was to export it in the shell. With \`extra="forbid"\` (pydantic-settings' default) an unknown key in the file also fails validation when the settings are built.`,
      example:
        '# local.env, the env_file of tabled/settings.py:\n#   class Settings(BaseSettings):\n#       TORCH_DEVICE: Optional[str] = None\n#       class Config:\n#           env_file = find_dotenv("local.env")\n#           extra = "ignore"\nTORCH_DEVICE=cuda\nCUDA_VISIBLE_DEVICES=1\n',
      fix: "# local.env (the program is started as `CUDA_VISIBLE_DEVICES=1 python extract_tables.py`):\nTORCH_DEVICE=cuda\n",
      whenNotToCare:
        "When the program is always started by something outside the project that exports the file (`set -a; . ./local.env` in a user's shell profile, a deployment that passes it as the container's env file, an IDE run configuration kept outside the repository). Better: set the variable where the program starts (`CUDA_VISIBLE_DEVICES=1 python app.py`, GPU Pilot's run command), or call `load_dotenv(\"local.env\")` before anything imports a framework.",
      references: [
        `${PYDANTIC_SETTINGS} pydantic_settings/sources/providers/dotenv.py:76-85 \`_static_read_env_file\` (\`dotenv_values\`), :99-119 \`_read_env_files\`; no write of os.environ in the package (reads only: sources/providers/env.py:94, utils.py:14)`,
        "pydantic-settings documentation, 'Dotenv (.env) support' (https://docs.pydantic.dev/latest/concepts/pydantic_settings/#dotenv-env-support): the file is loaded through `env_file` in model_config or `_env_file` at instantiation and its values are passed to the model; `extra='forbid'` (the default) rejects entries without a field",
        `${PYDANTIC_V1} pydantic/env_settings.py:44-85 \`BaseSettings._build_environ\`, :125-135 \`read_env_file\` (\`dotenv_values\`)`,
        `${PYTHON_DOTENV} src/dotenv/main.py: \`dotenv_values\` returns \`DotEnv(...).dict()\`; \`load_dotenv\` calls \`DotEnv.set_as_environment_variables\` (\`os.environ[k] = v\`); \`find_dotenv(filename)\` searches the calling module's folder and its ancestors`,
        "VS Code documentation, Python environments, 'Environment variables' (https://code.visualstudio.com/docs/python/environments#_environment-variables): the `python.envFile` setting defaults to `${workspaceFolder}/.env`, loaded for runs and debugging; pipenv documentation: `pipenv run` and `pipenv shell` load a `.env` file of the project",
        "VikParuchuri/tabled#12 (2024-10-21): CUDA_VISIBLE_DEVICES=1 in local.env, the env_file of the project's Settings class, had no effect; the maintainer: export it in the shell",
      ],
      language: "dotenv",
    },
  },
  checkManifest(ctx) {
    if (ctx.manifest.kind !== "dotenv" || !ctx.file) return;
    const entries = dotenvEntries(ctx.manifest.src.text);
    if (!entries.length) return;
    const file = resolve(ctx.file);
    const project = projectOf(file);
    const modules = modulesAround(ctx, project, entries);
    const readers = modules.flatMap((m) =>
      m.names.filter((n) => namesFile(n.path, dirname(m.file), file)).map((n) => ({ ...n, file: m.file })),
    );
    if (
      !readers.length ||
      modules.some((m) => exportsAll(m.exports, basename(file))) ||
      otherFileExports(ctx, file, project)
    )
      return;
    for (const e of entries) {
      // The setting's attribute: the variable's name, or a field that names it (`Field(alias=...)`).
      const own = e.variable.toLowerCase();
      const names = [own, ...modules.flatMap((m) => m.aliases.get(own) ?? [])];
      if (modules.some((m) => m.exports.writes.has(e.variable) || names.some((n) => m.exports.attributes.has(n))))
        continue;
      report(ctx, e, readers[0], basename(file) === ".env");
    }
  },
};

/** One `KEY=value` line of the dotenv file that sets a startup variable. */
interface Entry {
  variable: string;
  value: string;
  start: number;
  end: number;
}

/**
 * The lines of a dotenv text that set a startup variable to a non-empty value (python-dotenv's
 * syntax: an optional `export`, `KEY=value`, a value in quotes that may span lines, `#` comments).
 */
export function dotenvEntries(text: string): Entry[] {
  const out: Entry[] = [];
  let quote: string | null = null;
  let offset = 0;
  for (const line of text.split("\n")) {
    const start = offset;
    offset += line.length + 1;
    if (quote) {
      if (closes(line, quote)) quote = null;
      continue;
    }
    const m = /^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*(.*?)\r?$/.exec(line);
    if (!m) continue;
    const raw = m[2];
    const at = start + line.length - line.replace(/^[ \t]*(?:export[ \t]+)?/, "").length;
    const rawAt = start + m[0].length - m[2].length - (m[0].endsWith("\r") ? 1 : 0);
    let value: string;
    let end: number;
    if (raw.startsWith('"') || raw.startsWith("'")) {
      const q = raw[0];
      const close = raw.slice(1).search(q === '"' ? /(?<!\\)"/ : /'/);
      if (close < 0) {
        quote = q;
        continue;
      }
      value = raw.slice(1, close + 1);
      end = rawAt + close + 2;
    } else {
      value = raw.replace(/(?:^|\s+)#.*$/, "").trim();
      end = rawAt + raw.replace(/(?:^|\s+)#.*$/, "").trimEnd().length;
    }
    if (!value || !STARTUP_VARIABLES.includes(m[1])) continue;
    out.push({ variable: m[1], value, start: at, end });
  }
  return out;
}

/** Whether a line closes a value opened with quote `q` (an unescaped `q`). */
const closes = (s: string, q: string): boolean => (q === '"' ? /(?<!\\)"/.test(s) : s.includes(q));

/** One Python module around the dotenv file, with what GPU076 reads of it. */
interface Module {
  file: string;
  names: EnvFileName[];
  exports: ModuleExports;
  /** Settings fields that name a variable by an alias: variable to field, lower-cased. */
  aliases: Map<string, string>;
}

/**
 * The Python modules around the dotenv file that name a dotenv file in a settings class or may
 * export one: only the texts that hold the words those need are parsed.
 */
function modulesAround(ctx: ManifestRuleContext, project: Project, entries: Entry[]): Module[] {
  const out: Module[] = [];
  const paths = project.files.filter((f) => f.endsWith(".py")).slice(0, MAX_MODULES);
  const parse = (path: string, text: string) => {
    const facts = settingsFacts(text);
    if (facts) out.push({ file: path, ...facts });
  };
  // First the modules that may define settings classes (their env_file and their fields' aliases),
  // then the others that hold a word ModuleExports reads: dotenv calls, os.environ and os.putenv,
  // `env=` of a child process, or a setting's name (any case: `settings.cuda_visible_devices`, or
  // the field that an alias gives the variable).
  const rest: string[] = [];
  for (const path of paths) {
    const text = ctx.read(path, MAX_MODULE_BYTES);
    if (text !== null && text.includes("BaseSettings")) parse(path, text);
    else if (text !== null) rest.push(path);
  }
  const words = entries.map((e) => e.variable.toLowerCase());
  for (const m of [...out]) for (const w of [...words]) if (m.aliases.has(w)) words.push(m.aliases.get(w)!);
  for (const path of rest) {
    const text = ctx.read(path, MAX_MODULE_BYTES);
    if (text === null) continue;
    const lower = text.toLowerCase();
    if (/dotenv|environ|putenv|env\s*=/.test(text) || words.some((w) => lower.includes(w))) parse(path, text);
  }
  return out;
}

/** Whether a module may export the whole file: `load_dotenv` of it (or of a path not written as a literal), `dotenv_values` into os.environ, `os.environ.update(...)` of a mapping. */
const exportsAll = (m: ModuleExports, name: string): boolean =>
  m.bulk !== null || m.loads.some((l) => l.name === null || l.name === name);

/** Base names of the project files read for a command or setting that exports the file by its name. */
const SHELLISH = /\.(?:sh|bash|zsh|sbatch|slurm|mk|ya?ml|toml|ini|cfg|conf|service|xml)$/i;
const MAKEISH = new Set(["makefile", "gnumakefile", "justfile", "procfile", "pipfile", "package.json"]);
const DOC = /\.(?:md|markdown|rst)$/i;
/** A Markdown line that names the file with one of these exports it in a shell. */
const DOC_EXPORT = /\bsource\s|(?:^|[\s;&|(])\.\s|set\s+-a|--env-file|export\s+\$\(|env\s+\$\(|xargs|dotenv/;

/**
 * Whether a project file other than Python exports the dotenv file (or may): a shell script,
 * Makefile, justfile, Procfile, Dockerfile, YAML (compose `env_file:`), `pyproject.toml`/`tox.ini`/
 * `setup.cfg`/`pytest.ini` naming it; a Markdown line naming it with a shell export; the hidden
 * configurations (`.envrc`, `.devcontainer`, `.vscode`) of the folders searched naming it; for
 * `.env`, a Pipfile or Procfile (pipenv and honcho load `.env` themselves).
 */
function otherFileExports(ctx: ManifestRuleContext, file: string, project: Project): boolean {
  const name = basename(file);
  const named = nameTest(name);
  const wanted = (n: string) =>
    SHELLISH.test(n) ||
    MAKEISH.has(n.toLowerCase()) ||
    DOC.test(n) ||
    HIDDEN.has(n) ||
    isDockerfileName(n) ||
    isComposeName(n);
  for (const path of project.files.filter((f) => wanted(basename(f))).slice(0, MAX_OTHER_FILES)) {
    const n = basename(path);
    if (name === ".env" && (n === "Pipfile" || n === "Procfile")) return true;
    const read = ctx.read(path, MAX_OTHER_BYTES);
    if (read === null) continue;
    if (name === ".env" && n === ".envrc" && /\bdotenv\b/.test(read)) return true;
    if (!read.includes(name)) continue;
    const text = withoutComments(read, path);
    if (!DOC.test(path)) {
      if (named(text)) return true;
    } else if (text.split("\n").some((l) => named(l) && DOC_EXPORT.test(l))) return true;
  }
  return false;
}

/** Base names of shell scripts, whose comments the shell tokenizer finds (manifests/shell.ts). */
const SHELL = /\.(?:sh|bash|zsh|sbatch|slurm)$/i;

/**
 * The text without its comments, blanked (a `# see local.env` exports nothing): a shell script's
 * from the shell tokenizer; in the other files (Makefile, YAML, TOML, INI, Dockerfile) the lines
 * that start with `#`; Markdown as it is.
 */
function withoutComments(text: string, path: string): string {
  if (SHELL.test(path)) {
    let out = text;
    for (const c of parseShell(new SourceText(text)).comments)
      out = out.slice(0, c.start) + " ".repeat(c.end - c.start) + out.slice(c.end);
    return out;
  }
  return DOC.test(path) ? text : text.replace(/^[ \t]*#.*$/gm, "");
}

/** Whether a text names the file: its base name as a whole word of a path (`./local.env`, `"local.env"`, not `local.env.example`). */
function nameTest(name: string): (text: string) => boolean {
  const re = new RegExp(`(?:^|[^\\w.-])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w.-])`, "m");
  return (text) => re.test(text);
}

/** The hidden files and folders the project walk enters: direnv's `.envrc`, Dev Container and VS Code configurations. */
const HIDDEN = new Set([".envrc", ".devcontainer.json", "devcontainer.json", "launch.json", "settings.json"]);
const HIDDEN_FOLDERS = new Set([".devcontainer", ".vscode", ".idea", ".github", ".circleci"]);
/** Folders never entered: environments, caches and build output. */
const SKIPPED_FOLDERS = new Set(["node_modules", "__pycache__", "site-packages", "venv", "build", "dist"]);
const MAX_DEPTH = 5;
const MAX_FILES = 5000;

/** The project of a dotenv file: its root and the files under it. */
interface Project {
  root: string;
  files: string[];
}

const projects = new Map<string, { at: number; project: Project }>();

/**
 * The project of the dotenv file: the nearest folder holding `.git` among the file's folder and its
 * ancestors (three levels at most), else the file's own folder; and its files, nearest folders
 * first (breadth first, five folder levels, 5000 files at most; hidden folders left out but
 * `.devcontainer` and `.vscode`, and environments, caches and build output). Kept a few seconds.
 */
function projectOf(file: string): Project {
  let root = dirname(file);
  for (let d = root, level = 0; level <= 3; level++, d = dirname(d)) {
    if (exists(join(d, ".git"))) {
      root = d;
      break;
    }
    if (dirname(d) === d) break;
  }
  const hit = projects.get(root);
  if (hit && Date.now() - hit.at < 5000) return hit.project;
  const files: string[] = [];
  let level: string[] = [root];
  for (let depth = 0; depth <= MAX_DEPTH && level.length && files.length < MAX_FILES; depth++) {
    const next: string[] = [];
    for (const d of level) {
      for (const e of listDir(d)) {
        const path = join(d, e.name);
        if (e.dir) {
          const hidden = e.name.startsWith(".");
          if ((!hidden || HIDDEN_FOLDERS.has(e.name)) && !SKIPPED_FOLDERS.has(e.name)) next.push(path);
        } else if (
          files.length < MAX_FILES &&
          (!e.name.startsWith(".") || e.name === ".envrc" || e.name === ".devcontainer.json")
        )
          files.push(path);
      }
    }
    level = next;
  }
  const project = { root, files };
  if (projects.size > 16) projects.clear();
  projects.set(root, { at: Date.now(), project });
  return project;
}

/** A folder's entries, sorted by name (none when it cannot be read). */
function listDir(d: string): Array<{ name: string; dir: boolean }> {
  try {
    return readdirSync(d, { withFileTypes: true })
      .map((e) => ({ name: e.name, dir: e.isDirectory() }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

const exists = (p: string): boolean => {
  try {
    return statSync(p, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
};

function report(ctx: ManifestRuleContext, e: Entry, reader: EnvFileName & { file: string }, preview: boolean): void {
  const name = basename(ctx.file!);
  const where = `${relative(dirname(ctx.file!), reader.file) || basename(reader.file)} line ${reader.range.start.line + 1}`;
  const value = /^[\w,.:-]*$/.test(e.value) ? e.value : `'${e.value}'`;
  const read =
    reader.how === "env_file"
      ? `the env_file of ${reader.className}`
      : `passed as _env_file to ${reader.className}(...)`;
  ctx.report({
    range: ctx.manifest.src.range(e.start, e.end),
    preview,
    message: `${e.variable} is set in ${name}, ${read} (${where}): BaseSettings reads the file only into the settings' fields and never puts it into os.environ, so CUDA and the frameworks never see it; set it where the program starts (\`${e.variable}=${value} python ...\`)`,
    related: [
      {
        range: reader.range,
        message: `${reader.className} reads ${name} (${reader.how}); nothing in the project exports it to the process environment`,
        file: reader.file,
      },
    ],
  });
}
