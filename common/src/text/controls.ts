/**
 * Text from the code under review, made safe for every place a message goes: a terminal (raw ESC
 * sets the title or rewrites the screen), a GitHub Actions log (a newline starts a new line that
 * the runner reads as a workflow command such as `::add-mask::` or `::stop-commands::`), SARIF and
 * JSON viewers, and the editor's Problems view.
 */

/**
 * Characters written as escapes by {@link escapeControls}: C0 controls (U+0000-U+001F), DEL, C1
 * controls (U+0080-U+009F; U+009B is an 8-bit CSI), the line and paragraph separators U+2028/U+2029,
 * and the bidirectional formatting characters (U+200E/U+200F, U+202A-U+202E, U+2066-U+2069) that
 * reorder what a reader sees.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `text` with every character of {@link CONTROL_CHARS} written as a visible escape, the way Python's
 * `repr` does: `\n`, `\r`, `\t`, `\xHH` for the other C0/C1 controls and DEL, `\uHHHH` for the
 * separators and bidirectional characters. Everything else (backslashes included) is unchanged, so
 * text without controls comes back as it was.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROL_CHARS, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const n = c.charCodeAt(0);
    return n <= 0xff ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
  });
}

/** True when `text` holds a character that {@link escapeControls} would escape. */
export function hasControls(text: string): boolean {
  CONTROL_CHARS.lastIndex = 0;
  const found = CONTROL_CHARS.test(text);
  CONTROL_CHARS.lastIndex = 0;
  return found;
}
