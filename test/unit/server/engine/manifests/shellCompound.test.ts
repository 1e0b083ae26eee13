/** parseShell's `enclosing`: the compound commands each simple command is written in (manifests/shell.ts). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseShell } from "../../../../../server/src/engine/manifests/shell";
import { SourceText } from "../../../../../server/src/engine/manifests/source";

const SCRIPT = `#!/bin/bash
a=1
if [ -z "$1" ]; then
  echo usage
fi
run() {
  export X=$1
}
function other {
  b=2
}
function third() {
  c=3
}
for i in 1 2; do d=$i; done
while true; do e=1; done
case $1 in
  a) f=1 ;;
  (b) g=2 ;;
esac
arr=(1 2 3)
( h=1 )
{ j=1; } > log
[ -n "$1" ] && { if true; then k=1; fi; }
top=1
`;

test("parseShell: each command's enclosing compound commands, outermost first; top-level commands have none", () => {
  const text = (c: { start: number; end: number }) => SCRIPT.slice(c.start, c.end);
  const got = parseShell(new SourceText(SCRIPT)).commands.map((c) => `${text(c)} ${(c.enclosing ?? []).join("/")}`);
  assert.deepEqual(got, [
    "a=1 ",
    '[ -z "$1" ] if',
    "echo usage if",
    "export X=$1 function",
    "b=2 function",
    "c=3 function",
    "d=$i loop",
    "true loop",
    "e=1 loop",
    "f=1 case",
    "g=2 case",
    // an array's parentheses are no subshell (its words read as a command, as before)
    "arr= ",
    "1 2 3 ",
    "h=1 subshell",
    "j=1 brace",
    '[ -n "$1" ] ',
    "true brace/if",
    "k=1 brace/if",
    "top=1 ",
  ]);
});

test("parseShell: a here-string (`<<<`) is a redirection, not a here-document that would swallow the lines after it", () => {
  const text =
    "IFS=',' read -ra GPUS <<< \"$CUDA_VISIBLE_DEVICES\"\nNGPU=${#GPUS[@]}\npython t.py --n $NGPU\ncat <<EOF\nnot a command\nEOF\necho done\n";
  const got = parseShell(new SourceText(text)).commands.map(
    (c) => c.words.map((w) => w.value).join(" ") || c.assignments[0].name,
  );
  assert.deepEqual(got, ["read -ra GPUS", "NGPU", "python t.py --n $NGPU", "cat", "echo done"]);
});
