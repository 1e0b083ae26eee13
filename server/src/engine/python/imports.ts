/**
 * Which imports GPU002 counts as "something between the framework import and the write that may
 * initialise CUDA", and the module-level imports of a module (shared with
 * scripts/scan-init-at-import.mjs, which follows them through a package).
 */
import type { SyntaxNode } from "./parser";

/**
 * The standard library's top-level modules: CPython 3.11.7's `sys.stdlib_module_names`, private
 * (`_`-prefixed) names left out. None of them initialises CUDA.
 */
export const STDLIB_MODULES: ReadonlySet<string> = new Set([
  "abc",
  "aifc",
  "antigravity",
  "argparse",
  "array",
  "ast",
  "asynchat",
  "asyncio",
  "asyncore",
  "atexit",
  "audioop",
  "base64",
  "bdb",
  "binascii",
  "bisect",
  "builtins",
  "bz2",
  "cProfile",
  "calendar",
  "cgi",
  "cgitb",
  "chunk",
  "cmath",
  "cmd",
  "code",
  "codecs",
  "codeop",
  "collections",
  "colorsys",
  "compileall",
  "concurrent",
  "configparser",
  "contextlib",
  "contextvars",
  "copy",
  "copyreg",
  "crypt",
  "csv",
  "ctypes",
  "curses",
  "dataclasses",
  "datetime",
  "dbm",
  "decimal",
  "difflib",
  "dis",
  "distutils",
  "doctest",
  "email",
  "encodings",
  "ensurepip",
  "enum",
  "errno",
  "faulthandler",
  "fcntl",
  "filecmp",
  "fileinput",
  "fnmatch",
  "fractions",
  "ftplib",
  "functools",
  "gc",
  "genericpath",
  "getopt",
  "getpass",
  "gettext",
  "glob",
  "graphlib",
  "grp",
  "gzip",
  "hashlib",
  "heapq",
  "hmac",
  "html",
  "http",
  "idlelib",
  "imaplib",
  "imghdr",
  "imp",
  "importlib",
  "inspect",
  "io",
  "ipaddress",
  "itertools",
  "json",
  "keyword",
  "lib2to3",
  "linecache",
  "locale",
  "logging",
  "lzma",
  "mailbox",
  "mailcap",
  "marshal",
  "math",
  "mimetypes",
  "mmap",
  "modulefinder",
  "msilib",
  "msvcrt",
  "multiprocessing",
  "netrc",
  "nis",
  "nntplib",
  "nt",
  "ntpath",
  "nturl2path",
  "numbers",
  "opcode",
  "operator",
  "optparse",
  "os",
  "ossaudiodev",
  "pathlib",
  "pdb",
  "pickle",
  "pickletools",
  "pipes",
  "pkgutil",
  "platform",
  "plistlib",
  "poplib",
  "posix",
  "posixpath",
  "pprint",
  "profile",
  "pstats",
  "pty",
  "pwd",
  "py_compile",
  "pyclbr",
  "pydoc",
  "pydoc_data",
  "pyexpat",
  "queue",
  "quopri",
  "random",
  "re",
  "readline",
  "reprlib",
  "resource",
  "rlcompleter",
  "runpy",
  "sched",
  "secrets",
  "select",
  "selectors",
  "shelve",
  "shlex",
  "shutil",
  "signal",
  "site",
  "smtpd",
  "smtplib",
  "sndhdr",
  "socket",
  "socketserver",
  "spwd",
  "sqlite3",
  "sre_compile",
  "sre_constants",
  "sre_parse",
  "ssl",
  "stat",
  "statistics",
  "string",
  "stringprep",
  "struct",
  "subprocess",
  "sunau",
  "symtable",
  "sys",
  "sysconfig",
  "syslog",
  "tabnanny",
  "tarfile",
  "telnetlib",
  "tempfile",
  "termios",
  "textwrap",
  "this",
  "threading",
  "time",
  "timeit",
  "tkinter",
  "token",
  "tokenize",
  "tomllib",
  "trace",
  "traceback",
  "tracemalloc",
  "tty",
  "turtle",
  "turtledemo",
  "types",
  "typing",
  "unicodedata",
  "unittest",
  "urllib",
  "uu",
  "uuid",
  "venv",
  "warnings",
  "wave",
  "weakref",
  "webbrowser",
  "winreg",
  "winsound",
  "wsgiref",
  "xdrlib",
  "xml",
  "xmlrpc",
  "zipapp",
  "zipfile",
  "zipimport",
  "zlib",
  "zoneinfo",
]);

/**
 * Widely used libraries with no CUDA code of their own (their PyPI distributions depend on no CUDA
 * library), so importing them cannot initialise CUDA: GPU002 does not name them as suspects.
 */
export const NON_GPU_LIBRARIES: ReadonlySet<string> = new Set([
  "numpy",
  "pandas",
  "scipy",
  "matplotlib",
  "sklearn",
  "tqdm",
  "yaml",
  "PIL",
  "requests",
  "click",
  "typer",
  "rich",
  "omegaconf",
  "hydra",
  "wandb",
  "tensorboard",
  "absl",
  "fire",
  "dotenv",
  "pydantic",
  "attr",
  "attrs",
  "packaging",
  "psutil",
  "h5py",
  "seaborn",
  "safetensors",
  "tokenizers",
  "datasets",
  "huggingface_hub",
  "sentencepiece",
  "regex",
  "mlflow",
  "hypothesis",
  "pytest",
]);

/**
 * The import statements a block runs when it runs: directly in it, in its `if`/`elif`/`else`,
 * `try`/`except`/`finally`, `with`, loop and `match` blocks and class bodies; not in `def` bodies
 * (they run when called) and not under `if TYPE_CHECKING:` (never at run time; its `else` runs).
 * @param statements a module's (or block's) statements, in source order; the result keeps that order.
 */
export function importsRunAtImport(statements: ReadonlyArray<SyntaxNode | null>): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const visit = (nodes: ReadonlyArray<SyntaxNode | null>) => {
    for (const c of nodes) {
      if (!c) continue;
      if (c.type === "import_statement" || c.type === "import_from_statement") out.push(c);
      else if (
        c.type === "function_definition" ||
        (c.type === "decorated_definition" && c.namedChildren.some((d) => d?.type === "function_definition"))
      )
        continue;
      else if (
        c.type === "if_statement" &&
        /^(typing\.)?TYPE_CHECKING$/.test(c.childForFieldName("condition")?.text ?? "")
      ) {
        for (const alt of c.childrenForFieldName("alternative")) if (alt) visit(alt.namedChildren);
      } else if (COMPOUND_PARTS.has(c.type)) visit(c.namedChildren);
    }
  };
  visit(statements);
  return out;
}

/** Node types whose children run when they run (blocks, clauses, class bodies). */
const COMPOUND_PARTS: ReadonlySet<string> = new Set([
  "if_statement",
  "elif_clause",
  "else_clause",
  "try_statement",
  "except_clause",
  "except_group_clause",
  "finally_clause",
  "with_statement",
  "for_statement",
  "while_statement",
  "block",
  "class_definition",
  "decorated_definition",
  "match_statement",
  "case_clause",
]);

/** The absolute module paths one import statement imports (`import a.b as c` → `a.b`; `from a import b` → `a`); none for a relative import. */
export function importedModules(stmt: SyntaxNode): string[] {
  if (stmt.type === "import_statement") {
    return stmt.namedChildren
      .map((n) =>
        n?.type === "dotted_name"
          ? n.text
          : n?.type === "aliased_import"
            ? n.childForFieldName("name")?.text
            : undefined,
      )
      .filter((x): x is string => !!x);
  }
  const mod = stmt.childForFieldName("module_name")?.text ?? "";
  return mod && !mod.startsWith(".") ? [mod] : [];
}
