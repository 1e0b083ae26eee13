/**
 * manifests/yaml.ts `parseYamlAfter` (the editor's YAML parse: only the documents a change touches
 * are parsed again, the others kept, those after it moved) gives what a parse of the whole text
 * gives, after random edits of YAML streams made of the project's manifest fixtures: the same
 * documents with the same ranges, errors and warnings, the same nodes at the same offsets, the same
 * values; and lintManifest with it finds the same.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { visit, type Document } from "yaml";
import { ROOT, filesUnder } from "../../../support/helpers";
import {
  parseYaml,
  parseYamlAfter,
  type YamlDocument,
  type YamlParse,
} from "../../../../../server/src/engine/manifests/yaml";
import { lintManifest } from "../../../../../server/src/engine/manifests/lintManifest";

/** Everything the manifest model and rules read of the documents, as a string. */
function shape(docs: readonly YamlDocument[]): string {
  return JSON.stringify(
    docs.map((d) => {
      const nodes: unknown[] = [];
      visit(d.doc, {
        Node(_, n) {
          nodes.push([n.constructor.name, n.range]);
        },
      });
      // mapAsMap: a key that is a collection (a Helm template's `{ .Release.Name }`) stays a key
      // instead of a stringified one with a warning; maps are written out as their entries.
      let value: unknown;
      try {
        value = JSON.stringify(d.doc.toJS({ maxAliasCount: -1, mapAsMap: true }), (_k, v: unknown) =>
          v instanceof Map ? [...v] : v,
        );
      } catch (e) {
        value = `throws ${(e as Error).message}`;
      }
      return {
        index: d.index,
        broken: d.broken,
        range: d.doc.range,
        errors: d.doc.errors.map((e) => [e.code, e.pos]),
        warnings: d.doc.warnings.map((e) => [e.code, e.pos]),
        nodes,
        value,
      };
    }),
  );
}

const FIXTURES = filesUnder(join(ROOT, "test", "fixtures", "rules"), (n) => /\.ya?ml$/.test(n)).map((f) =>
  readFileSync(f, "utf8"),
);
const PIECES = [
  "x",
  " ",
  "\n",
  "---\n",
  "\n---\n",
  "...\n",
  "'",
  '"',
  "[",
  "]",
  "{",
  "}",
  ": ",
  "- ",
  "#",
  "|\n",
  "  ",
  "\t",
  "&a ",
  "*a",
  "nvidia.com/gpu: 1\n",
  "---",
];

function rng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
}

test("parseYamlAfter equals a parse of the whole text after random edits of YAML streams", () => {
  assert.ok(FIXTURES.length >= 8, `only ${FIXTURES.length} YAML fixtures`);
  let steps = 0,
    reused = 0;
  for (let k = 0; k < 40; k++) {
    const r = rng(0x51f15e ^ (k * 2654435761));
    // A stream of 3 to 8 fixtures, `---` between them.
    let text = Array.from({ length: 3 + r(6) }, () => FIXTURES[r(FIXTURES.length)].trimEnd()).join("\n---\n") + "\n";
    let kept: YamlParse = { text, documents: parseYaml(text) };
    for (let step = 0; step < 25; step++) {
      const start = r(text.length + 1);
      const end = Math.min(text.length, start + (r(4) === 0 ? r(40) : r(2)));
      const before = text;
      text = text.slice(0, start) + (r(5) === 0 ? "" : PIECES[r(PIECES.length)]) + text.slice(end);
      const count = kept.documents.length;
      const oldDocs = new Set(kept.documents.map((d) => d.doc));
      kept = parseYamlAfter(kept, text);
      const fresh = parseYaml(text);
      assert.equal(
        shape(kept.documents),
        shape(fresh),
        `stream ${k} step ${step}: edit at ${start}-${end} of ${JSON.stringify(before.slice(Math.max(0, start - 30), end + 30))}`,
      );
      if (count > 1 && kept.documents.some((d) => oldDocs.has(d.doc))) reused++;
      steps++;
    }
  }
  // Many edits keep documents (the shortcut ran, not only the whole-text fallback, which the random
  // edits' unclosed quotes and brackets often need).
  assert.ok(reused > steps / 3, `documents kept in ${reused} of ${steps} steps`);
});

test("lintManifest with the kept parse finds what it finds with a whole parse, as the stream is edited", () => {
  const r = rng(7);
  const workloads = readFileSync(join(ROOT, "test", "fixtures", "rules", "GPU018", "workloads.yaml"), "utf8").trimEnd();
  let text = Array.from({ length: 6 }, () => workloads).join("\n---\n") + "\n";
  let kept: YamlParse | undefined;
  for (let step = 0; step < 30; step++) {
    const at = r(text.length + 1);
    text = text.slice(0, at) + PIECES[r(PIECES.length)] + text.slice(at);
    const incremental = lintManifest(text, "yaml", { lazyFixValidation: true }, { previous: kept });
    kept = incremental.yaml;
    const whole = lintManifest(text, "yaml", { lazyFixValidation: true });
    assert.deepEqual(incremental.diagnostics, whole.diagnostics, `step ${step}`);
    assert.ok(kept, "the result carries the parse for the next version");
  }
});

/** The fallback: a stream with a `%` directive line is parsed whole (directives carry between documents). */
test("parseYamlAfter parses the whole text when a directive line is there", () => {
  const text = "a: 1\n---\nb: 2\n...\n%YAML 1.2\n---\nc: 3\n";
  const first: YamlParse = { text, documents: parseYaml(text) };
  const kept = new Set(first.documents.map((d) => d.doc));
  const next = parseYamlAfter(first, text.replace("a: 1", "a: 2"));
  assert.ok(next.documents.every((d) => !kept.has(d.doc as Document.Parsed)));
  assert.equal(shape(next.documents), shape(parseYaml(next.text)));
});
