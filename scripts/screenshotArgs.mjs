// The options of scripts/screenshot.mjs, parsed so that every option takes its value either way:
// `--opt value` or `--opt=value`. node:util parseArgs alone refuses `--suffix -8` (a value starting
// with a dash is "ambiguous"), which is why the README once wrote `--suffix=-8` beside `--out-dir DIR`.
import { parseArgs } from "node:util";

/**
 * The options of the screenshot script (all strings but --help), with their defaults;
 * `outDirDefault` is the default of --out-dir (the clone's media/).
 */
export function screenshotOptions(outDirDefault) {
  return {
    help: { type: "boolean", short: "h", default: false },
    "out-dir": { type: "string", default: outDirDefault },
    file: { type: "string", default: "finetune_wrong_gpu.py" },
    width: { type: "string", default: "1280" },
    height: { type: "string", default: "720" },
    "history-height": { type: "string", default: "1750" },
    scale: { type: "string", default: "2" },
    only: { type: "string", default: "tree,dashboard,problem,history,slurm" },
    "sidebar-width": { type: "string", default: "300" },
    "dashboard-height": { type: "string", default: "1800" },
    suffix: { type: "string", default: "" },
  };
}

/**
 * The screenshot script's options from `argv` (without node and the script): `--opt value` and
 * `--opt=value` alike for every option that takes a value, also a value that starts with one dash
 * (`--suffix -8`). A value-taking option followed by another option (`--suffix --only x`) or by
 * nothing is an error, as parseArgs says. Throws parseArgs' TypeError on an unknown option.
 */
export function parseScreenshotArgs(argv, outDirDefault) {
  const options = screenshotOptions(outDirDefault);
  const takesValue = new Set(
    Object.entries(options)
      .filter(([, o]) => o.type === "string")
      .map(([name]) => `--${name}`),
  );
  const args = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = argv[i + 1];
    if (takesValue.has(a) && next !== undefined && !next.startsWith("--")) {
      args.push(`${a}=${next}`);
      i++;
    } else args.push(a);
  }
  return parseArgs({ args, options, allowPositionals: false }).values;
}
