/**
 * manifests/yaml.ts `itemStart` finds a block sequence item's `-` from the text (the YAML parse no
 * longer keeps source tokens: a third of its time). Reference: the `seq-item-ind` token of a parse
 * that keeps them, for every block sequence item of the project's YAML fixtures and of texts with
 * comments between the indicator and its item, CRLF line breaks and nested sequences; an item with
 * a tag or an anchor before it gets null (no removal offered), never a wrong offset.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, visit, type CST, type YAMLSeq } from "yaml";
import { ROOT, CASES, filesUnder } from "../../../support/helpers";
import { itemStart } from "../../../../../server/src/engine/manifests/yaml";

/** [item start by text, `-` token offset] for each block sequence item of `text`. */
function pairs(text: string): Array<[number | null, number | undefined, string]> {
  const out: Array<[number | null, number | undefined, string]> = [];
  for (const doc of parseAllDocuments(text, { keepSourceTokens: true, prettyErrors: false, uniqueKeys: false })) {
    if (doc.errors.length) continue; // a broken document is not linted (model.ts), so no fix is built in it
    visit(doc, {
      Seq(_, seq: YAMLSeq) {
        if (seq.flow) return;
        const tok = seq.srcToken as CST.BlockSequence | undefined;
        seq.items.forEach((_, i) =>
          out.push([
            itemStart(text, seq, i),
            tok?.items[i]?.start.find((t) => t.type === "seq-item-ind")?.offset,
            JSON.stringify(text.slice(0, 60)),
          ]),
        );
      },
    });
  }
  return out;
}

const TRICKY = [
  "env:\n  - name: A\n    value: '1'\n  -   name: B\n",
  "env:\n  - # the first\n    name: A\n  -\n\n    # after a blank line\n    name: B\n",
  "env:\r\n  - name: A\r\n  - # c\r\n    name: B\r\n",
  "m:\n- - a\n  - b\n- - c\n",
  "k:\n  - 'x # y'\n  - \"z\" # trailing\n  -\tname: tab\n",
  "a: 1\n---\nlist:\n  - one\n  - two\n...\n---\n- top\n- level\n",
];

test("itemStart equals the `-` token's offset for every block sequence item of the fixtures and tricky texts", () => {
  const files = [
    ...filesUnder(join(ROOT, "test", "fixtures"), (n) => /\.ya?ml$/.test(n)),
    ...filesUnder(CASES, (n) => /\.ya?ml$/.test(n)),
    ...filesUnder(join(ROOT, "examples"), (n) => /\.ya?ml$/.test(n)),
  ];
  let n = 0;
  for (const text of [...TRICKY, ...files.map((f) => readFileSync(f, "utf8"))]) {
    for (const [mine, token, where] of pairs(text)) {
      assert.equal(mine, token, where);
      n++;
    }
  }
  assert.ok(n >= 40, `only ${n} items`);
});

test("itemStart: a tag or anchor before the item gives null, not an offset inside it", () => {
  const text = "env:\n  - &first\n    name: A\n  - !!map\n    name: B\n";
  const got = pairs(text);
  assert.equal(got.length, 2);
  for (const [mine] of got) assert.equal(mine, null);
});
