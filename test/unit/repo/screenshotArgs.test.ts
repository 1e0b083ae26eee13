// scripts/screenshot.mjs's options (scripts/screenshotArgs.mjs): every option takes its value as
// `--opt value` or `--opt=value`; node's parseArgs alone refused `--suffix -8` (a value starting with
// a dash), so the README spelt `--suffix=-8` beside `--out-dir DIR`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseScreenshotArgs, screenshotOptions } from "../../../scripts/screenshotArgs.mjs";

const MEDIA = "/repo/media";

test("every option that takes a value takes it as --opt value and as --opt=value, the same", () => {
  const samples: Record<string, string> = {
    "out-dir": "/tmp/shots8",
    file: "notebook.ipynb",
    width: "1400",
    height: "800",
    "history-height": "2600",
    scale: "1",
    only: "tree,dashboard,history",
    "sidebar-width": "320",
    "dashboard-height": "2000",
    suffix: "-8",
  };
  const valued = Object.entries(screenshotOptions(MEDIA))
    .filter(([, o]) => o.type === "string")
    .map(([name]) => name);
  assert.deepEqual(valued.sort(), Object.keys(samples).sort(), "a sample value for every option");
  for (const [name, value] of Object.entries(samples)) {
    const spaced = parseScreenshotArgs([`--${name}`, value], MEDIA);
    const joined = parseScreenshotArgs([`--${name}=${value}`], MEDIA);
    assert.equal((spaced as unknown as Record<string, string>)[name], value, `--${name} ${value}`);
    assert.deepEqual(spaced, joined, `--${name} ${value} and --${name}=${value}`);
  }
});

test("the README's 8-GPU line: --out-dir DIR --only LIST --suffix -8 (a value starting with a dash)", () => {
  const o = parseScreenshotArgs(
    ["--out-dir", "/tmp/shots8", "--only", "tree,dashboard,history", "--suffix", "-8"],
    MEDIA,
  );
  assert.equal(o["out-dir"], "/tmp/shots8");
  assert.equal(o.only, "tree,dashboard,history");
  assert.equal(o.suffix, "-8");
  assert.equal(o.height, "720", "defaults kept");
  assert.equal(parseScreenshotArgs([], MEDIA)["out-dir"], MEDIA);
  assert.equal(parseScreenshotArgs(["-h"], MEDIA).help, true);
});

test("an option with no value, or followed by another option, and unknown options are errors", () => {
  assert.throws(() => parseScreenshotArgs(["--suffix"], MEDIA), /argument missing|requires|value/i);
  assert.throws(() => parseScreenshotArgs(["--suffix", "--only", "tree"], MEDIA), /ambiguous|argument/i);
  assert.throws(() => parseScreenshotArgs(["--outdir", "x"], MEDIA), /Unknown option/);
});
