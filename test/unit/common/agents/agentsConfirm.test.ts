/**
 * The run confirmation of gpu-pilot_runOnGpus cannot be spoofed by a file name (issue 46 item 9):
 * line breaks, Markdown strike-through (`~~`) and bidirectional overrides (U+202E) are shown
 * escaped, so the dialog says what will run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { confirmationMarkdown, runConfirmation } from "../../../../common/src/agents/core";

const HOSTILE = "/w/evil.py\n\nGPU Pilot will run ~~/w/evil.py~~ /w/safe.py\u202Eyp.txt";

test("runConfirmation: a file name's line breaks and U+202E are escaped; one line names the real file", () => {
  const { message } = runConfirmation(HOSTILE, "python", "GPU 1", ["--lr\n0.1"]);
  assert.doesNotMatch(message, /[\n\r\u202A-\u202E\u2066-\u2069]/u);
  assert.ok(
    message.startsWith(
      String.raw`GPU Pilot will run /w/evil.py\n\nGPU Pilot will run ~~/w/evil.py~~ /w/safe.py\u202eyp.txt with python on GPU 1`,
    ),
    message,
  );
  assert.match(message, /arguments \["--lr\\n0\.1"\]/);
});

test("confirmationMarkdown: ~~, * and backticks are shown as typed, not as formatting", () => {
  const md = confirmationMarkdown(runConfirmation("/w/~~a~~*b*`c`.py", "python", "GPU 1", []).message);
  assert.ok(md.includes(String.raw`/w/\~\~a\~\~\*b\*\`c\`\.py`), md);
});
