// The GPU History panel's stylesheet (client/webview/history.css): a selected GPU's box keeps its
// charts where every other box has them. Its wider edge (8 px, not 4) pushed its plots 4 px right of
// the other GPUs' until the edge took its extra width from the box's padding.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../support/root";

const css = readFileSync(join(ROOT, "client", "webview", "history.css"), "utf8");

/** The declarations of the rule whose selector is exactly `selector`. */
function rule(selector: string): Map<string, string> {
  const escaped = selector.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const body = new RegExp(`(?:^|\\n)${escaped}\\s*\\{([^}]*)\\}`).exec(css)?.[1];
  assert.ok(body !== undefined, `no rule ${selector}`);
  return new Map(
    body
      .split(";")
      .map((d) => d.split(":").map((p) => p.trim()))
      .filter((d) => d.length === 2 && d[0])
      .map(([k, v]) => [k, v] as [string, string]),
  );
}

const px = (v: string | undefined) => Number(/^(\d+(?:\.\d+)?)px$/.exec(v ?? "")?.[1] ?? NaN);

test("a selected GPU's box is as far from its charts as any other box: wider edge, less padding", () => {
  const box = rule("section.gpu");
  const selected = rule("section.gpu.selected");
  const edge = px(box.get("border-left-width"));
  const padLeft = px(box.get("padding")?.split(/\s+/)[1]); // `8px 10px`: 10 px left and right
  assert.equal(edge, 4);
  assert.equal(padLeft, 10);
  const selEdge = px(selected.get("border-left-width"));
  assert.ok(selEdge > edge, "the selection still shows: a wider edge");
  assert.equal(selEdge + px(selected.get("padding-left")), edge + padLeft, "the charts start at the same x");
});

test("a legend's second row lines up under its first: its entries on a grid of equal fixed columns, the time over two", () => {
  // 8 GPUs at the panel's width wrapped GPU 6 and GPU 7 to a second row that started at the row's left,
  // off the first row's entries (inline entries, each as wide as its text).
  const legend = rule(".uplot .u-legend.u-inline tbody");
  assert.equal(legend.get("display"), "grid");
  const columns = /^repeat\(auto-fill, (\d+(?:\.\d+)?)em\)$/.exec(legend.get("grid-template-columns") ?? "");
  assert.ok(columns, `equal fixed-width columns: ${legend.get("grid-template-columns")}`);
  // Wide enough for the widest GPU entry, `GPU 15: 100` (about 9.7 em of the legend's bold and plain text).
  assert.ok(Number(columns[1]) >= 10, `${columns[1]} em`);
  assert.equal(rule(".uplot .u-legend.u-inline tr").get("margin-right"), "0", "the grid's gap, not uPlot's margin");
  assert.equal(rule(".uplot .u-legend.u-inline tr:first-child").get("grid-column"), "span 2", "the time's entry");
});
