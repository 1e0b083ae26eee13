// The History panel's run markers and "All GPUs" chart (client/src/gpu/historyMarks.ts, issue 45
// item 5): markers only on the GPUs a run was given, labels that never overlap, every GPU on one chart.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  combineGpus,
  contrastRatio,
  legibleOn,
  parseColour,
  drawRunMarks,
  drawTotalLine,
  GPU_PALETTE,
  gpuLineStyle,
  hoveredMark,
  LABEL_BAND_PX,
  LABEL_PAD_PX,
  labelRowTop,
  layoutMarkLabels,
  lineBorderStyle,
  type MarkCanvas,
  type MarkGeometry,
  marksForGpu,
  type MarkLabelOptions,
  runMarkers,
  textLeftOf,
} from "../../../../client/src/gpu/historyMarks";
import type { GpuSeries } from "../../../../client/src/gpu/history";
import { memoryTotalLabel } from "../../../../client/src/gpu/historyText";

const G0 = "GPU-aaaa0000";
const G1 = "GPU-bbbb1111";

test("a run's markers go only on the charts of the GPUs it was given; a run with unknown GPUs on none", () => {
  const runs = [
    { file: "a.py", gpus: ["gpu-aaaa0000"] },
    { file: "b.py", gpus: ["gpu-bbbb1111"] },
    { file: "both.py", gpus: ["gpu-aaaa0000", "gpu-bbbb1111"] },
    { file: "slurm.py", gpus: [] },
  ];
  assert.deepEqual(
    marksForGpu(runs, G0).map((r) => r.file),
    ["a.py", "both.py"],
  );
  assert.deepEqual(
    marksForGpu(runs, G1).map((r) => r.file),
    ["b.py", "both.py"],
  );
  assert.deepEqual(marksForGpu(runs, "GPU-cccc2222"), []);
});

const OPTS: MarkLabelOptions = { plotLeft: 0, plotRight: 1000, pad: 4, gap: 6, maxRows: 3 };

/** True when the drawn labels' boxes (left..left+width, one row each) overlap anywhere. */
function overlaps(labels: { x: number; width: number }[], slots: ReturnType<typeof layoutMarkLabels>): boolean {
  const drawn = slots.map((s, i) => ({ ...s, right: s.left + labels[i].width })).filter((s) => s.visible);
  return drawn.some((a, i) => drawn.some((b, j) => i !== j && a.row === b.row && a.left < b.right && b.left < a.right));
}

test("a short run's start and end labels go on two rows (they were drawn over each other)", () => {
  // ▶ train.py at x 100 and ■ train.py at x 102 (a 2 s run), 80 px labels.
  const labels = [
    { x: 100, width: 80 },
    { x: 102, width: 80 },
  ];
  const slots = layoutMarkLabels(labels, OPTS);
  assert.deepEqual(slots, [
    { visible: true, row: 0, left: 104 },
    { visible: true, row: 1, left: 106 },
  ]);
  assert.equal(overlaps(labels, slots), false);
});

test("labels far enough apart share row 0; the gap is honoured", () => {
  // 104..184, then the second starts at 190 = 184 + 6: same row; at 189 it would not be.
  assert.deepEqual(
    layoutMarkLabels(
      [
        { x: 100, width: 80 },
        { x: 186, width: 50 },
      ],
      OPTS,
    ).map((s) => s.row),
    [0, 0],
  );
  assert.deepEqual(
    layoutMarkLabels(
      [
        { x: 100, width: 80 },
        { x: 185, width: 50 },
      ],
      OPTS,
    ).map((s) => s.row),
    [0, 1],
  );
});

test("a label that would leave the plot goes left of its line, clamped to the plot's left edge", () => {
  const slots = layoutMarkLabels(
    [
      { x: 980, width: 80 },
      { x: 30, width: 80 },
    ],
    { ...OPTS, plotLeft: 50 },
  );
  assert.equal(slots[0].left, 980 - 4 - 80);
  assert.equal(slots[1].left, 50, "x 30 + 4 is left of the plot: clamped to 50");
});

test("more close labels than rows: the extra ones are hover-only, and no drawn labels overlap", () => {
  const labels = [0, 1, 2, 3, 4].map((i) => ({ x: 200 + i, width: 90 }));
  const slots = layoutMarkLabels(labels, OPTS);
  assert.deepEqual(
    slots.map((s) => s.visible),
    [true, true, true, false, false],
  );
  assert.deepEqual(
    slots.filter((s) => s.visible).map((s) => s.row),
    [0, 1, 2],
  );
  assert.equal(overlaps(labels, slots), false);
  // A later label with room again goes back to row 0.
  const more = [...labels, { x: 400, width: 90 }];
  const s2 = layoutMarkLabels(more, OPTS);
  assert.deepEqual(s2[5], { visible: true, row: 0, left: 404 });
});

test("many random markers never give overlapping drawn labels", () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let n = 0; n < 200; n++) {
    const labels = Array.from({ length: 1 + Math.floor(rand() * 12) }, () => ({
      x: rand() * 1000,
      width: 20 + rand() * 120,
    }));
    assert.equal(overlaps(labels, layoutMarkLabels(labels, OPTS)), false, JSON.stringify(labels));
  }
});

test("the hover shows the hidden label nearest the cursor within reach", () => {
  const xs = [100, 103, 106, 300];
  const visible = [true, false, false, true];
  assert.equal(hoveredMark(xs, visible, 104, 8), 1);
  assert.equal(hoveredMark(xs, visible, 106, 8), 2);
  assert.equal(hoveredMark(xs, visible, 100, 2), -1, "the one at 100 is drawn; 103 is 3 px away");
  assert.equal(hoveredMark(xs, visible, 300, 8), -1, "drawn labels need no hover");
});

function gpu(
  uuid: string,
  at: number[],
  util: (number | null)[],
  mem: (number | null)[],
  total: number | null,
): GpuSeries {
  return { uuid, index: 0, name: "H200", memoryTotalMiB: total, at, utilizationPercent: util, memoryUsedMiB: mem };
}

test("All GPUs: each GPU's utilisation on one time axis and the memory of all added up", () => {
  const c = combineGpus([
    gpu(G0, [1000, 2000, 3000], [10, 20, 30], [100, 200, 300], 143771),
    gpu(G1, [2000, 3000, 4000], [50, null, 70], [1000, 1000, 1024], 143771),
  ]);
  assert.deepEqual(c.at, [1000, 2000, 3000, 4000]);
  assert.deepEqual(c.utilizationPercent, [
    [10, 20, 30, null],
    [null, 50, null, 70],
  ]);
  // At 1000 and 4000 one GPU has no sample: no sum (a partial sum would read as a drop).
  assert.deepEqual(c.memoryUsedMiB, [null, 1200, 1300, null]);
  assert.equal(c.memoryTotalMiB, 287542);
});

test("All GPUs: a GPU without memory.total gives no total; no GPUs give nothing", () => {
  assert.equal(combineGpus([gpu(G0, [1], [1], [1], 80), gpu(G1, [1], [1], [2], null)]).memoryTotalMiB, null);
  assert.deepEqual(combineGpus([gpu(G0, [1], [1], [null], 80), gpu(G1, [1], [1], [2], 80)]).memoryUsedMiB, [null]);
  assert.deepEqual(combineGpus([]), { at: [], utilizationPercent: [], memoryUsedMiB: [], memoryTotalMiB: null });
});

/**
 * A canvas context that records what is drawn and models `textAlign` as a canvas does: text drawn
 * at x starts at x (left/start), x - width/2 (center) or x - width (right/end). It starts with
 * `textAlign = "right"`, the state uPlot leaves after drawing its y axis.
 */
class RecordingCanvas implements MarkCanvas {
  font = "10px sans-serif";
  textAlign = "right";
  textBaseline = "alphabetic";
  strokeStyle: unknown = "#000";
  fillStyle: unknown = "#000";
  lineWidth = 1;
  /** Each line as drawn: from (x, top) to (x1, bottom), its colour and width. */
  readonly lines: { x: number; top: number; x1: number; bottom: number; color: unknown; width: number }[] = [];
  /** Each label background as drawn. */
  readonly rects: { x: number; y: number; w: number; h: number }[] = [];
  /** Each text as drawn: its left and right edges after textAlign, and its top (textBaseline `top`). */
  readonly texts: { text: string; left: number; right: number; top: number; color: unknown }[] = [];
  private stack: string[] = [];
  private moveX = NaN;
  private moveY = NaN;
  private lineX = NaN;
  private lineY = NaN;
  save(): void {
    this.stack.push(JSON.stringify([this.font, this.textAlign, this.textBaseline, this.lineWidth]));
  }
  restore(): void {
    [this.font, this.textAlign, this.textBaseline, this.lineWidth] = JSON.parse(this.stack.pop()!);
  }
  setLineDash(): void {}
  beginPath(): void {}
  moveTo(x: number, y: number): void {
    this.moveX = x;
    this.moveY = y;
  }
  lineTo(x: number, y: number): void {
    this.lineX = x;
    this.lineY = y;
  }
  stroke(): void {
    this.lines.push({
      x: this.moveX,
      top: this.moveY,
      x1: this.lineX,
      bottom: this.lineY,
      color: this.strokeStyle,
      width: this.lineWidth,
    });
  }
  fillRect(x: number, y: number, w: number, h: number): void {
    this.rects.push({ x, y, w, h });
  }
  /** 7 canvas px per character (the font's size does not matter here). */
  measureText(text: string): { width: number } {
    return { width: [...text].length * 7 };
  }
  fillText(text: string, x: number, y: number): void {
    const w = this.measureText(text).width;
    const left =
      this.textAlign === "right" || this.textAlign === "end" ? x - w : this.textAlign === "center" ? x - w / 2 : x;
    this.texts.push({ text, left, right: left + w, top: y, color: this.fillStyle });
  }
}

/** A 10 min axis over a 750 CSS px plot at 2 canvas px per CSS px, as the README's shot. */
function geometry(over: Partial<MarkGeometry> = {}): MarkGeometry {
  const min = 1_000_000;
  const max = min + 600;
  return {
    left: 144,
    top: 20,
    width: 1500,
    height: 300,
    px: 2,
    xOf: (s) => 144 + ((s - min) / (max - min)) * 1500,
    labelled: true,
    fontFamily: "sans-serif",
    labelBackground: "rgba(255, 255, 255, 0.75)",
    maxRows: 3,
    ...over,
  };
}

test("a marker's label is drawn beside its line, whatever textAlign uPlot left (it was a label's width left: 1.3 min)", () => {
  const runs = [
    { title: "t", file: "train_short.py", startedAt: (1_000_000 + 100) * 1000, endedAt: (1_000_000 + 106) * 1000 },
  ];
  const ctx = new RecordingCanvas();
  const g = geometry();
  const drawn = drawRunMarks(ctx, runMarkers(runs, 1_000_000, 1_000_600, { start: "green", end: "red" }), g);
  assert.deepEqual(
    drawn.map((d) => [d.text, d.visible, d.row]),
    [
      ["▶ train_short.py", true, 0],
      ["■ train_short.py", true, 0],
    ],
    "the start's label left of its line, the end's right of its line: one row for both",
  );
  assert.deepEqual(
    ctx.lines.map((l) => l.x),
    [144 + 250, 144 + 265],
    "lines at 100 s and 106 s of 600 over 1500 px",
  );
  const [start, end] = drawn;
  // 6 CSS px (12 canvas px) between a line and its label's box, the text 2 CSS px inside the box.
  assert.equal(start.boxLeft + start.boxWidth, start.lineX - 12, "the start's box ends 6 CSS px left of its line");
  assert.equal(ctx.texts[0].right, start.lineX - 16, "its text as drawn ends beside its box's right edge");
  assert.equal(end.boxLeft, end.lineX + 12, "the end's box starts 6 CSS px right of its line");
  assert.equal(
    ctx.texts[1].left,
    end.lineX + 16,
    `the end's text starts beside its line, not ${end.lineX - ctx.texts[1].left} px left of it`,
  );
  for (const [i, d] of drawn.entries()) {
    assert.equal(d.textLeft, ctx.texts[i].left, "the reported text position is the drawn one");
    assert.equal(ctx.texts[i].color, d.color);
  }
  assert.equal(ctx.textAlign, "right", "the context's state is restored for uPlot");
});

test("run labels keep clear of the lines: the start's label before the run (not over its first rise), row 0 in the band above the plot", () => {
  // The History shot's run: started at 84 s of a 240 s axis, the GPU at 100 % 8 s later.
  const min = 1_000_000;
  const xOf = (s: number) => 144 + ((s - min) / 240) * 1500;
  const g = geometry({ xOf, labelBand: LABEL_BAND_PX });
  const ctx = new RecordingCanvas();
  const drawn = drawRunMarks(
    ctx,
    runMarkers(
      [{ title: "t", file: "train.py", startedAt: (min + 84) * 1000, endedAt: (min + 188) * 1000 }],
      min,
      min + 240,
      {
        start: "green",
        end: "red",
      },
    ),
    g,
  );
  const rise = xOf(min + 92);
  const [start, end] = drawn;
  assert.ok(
    start.boxLeft + start.boxWidth <= start.lineX - LABEL_PAD_PX * g.px,
    "the start's label ends left of its line",
  );
  assert.ok(start.boxLeft + start.boxWidth < rise, "nowhere near the GPU's rise after the start");
  assert.ok(end.boxLeft >= end.lineX + LABEL_PAD_PX * g.px, "the end's label starts right of its line");
  assert.deepEqual(
    drawn.map((d) => d.row),
    [0, 0],
  );
  for (const r of ctx.rects) {
    assert.ok(r.y >= g.top - LABEL_BAND_PX * g.px, "inside the band");
    assert.ok(r.y + r.h <= g.top, `the label's box ends above the plot's top (a 100 % line): ${r.y + r.h} <= ${g.top}`);
  }
  for (const l of ctx.lines)
    assert.equal(l.top, g.top - LABEL_BAND_PX * g.px, "the marker lines reach up to their labels");
  // Further rows go inside the plot, 4 px under its top grid line.
  assert.equal(labelRowTop(0, LABEL_BAND_PX), -17);
  assert.equal(labelRowTop(1, LABEL_BAND_PX), 4);
  assert.equal(labelRowTop(2, LABEL_BAND_PX), 20);
  assert.equal(labelRowTop(0), 4, "no band: every row inside the plot");
});

test("near the plot's right edge a label is drawn left of its line, ending beside it", () => {
  const end = (1_000_000 + 598) * 1000;
  const ctx = new RecordingCanvas();
  const drawn = drawRunMarks(
    ctx,
    runMarkers([{ title: "t", file: "a.py", startedAt: end - 3000, endedAt: end }], 1_000_000, 1_000_600, {
      start: "green",
      end: "red",
    }),
    geometry(),
  );
  for (const [i, d] of drawn.entries()) {
    assert.equal(d.boxLeft + d.boxWidth, d.lineX - 12, `${d.text}: the box ends 6 CSS px left of its line`);
    assert.equal(ctx.texts[i].right, d.lineX - 16, `${d.text}: the text ends beside its line`);
  }
});

test("near the plot's left edge a start's label goes right of its line", () => {
  const ctx = new RecordingCanvas();
  const drawn = drawRunMarks(
    ctx,
    runMarkers([{ title: "t", file: "a.py", startedAt: (1_000_000 + 2) * 1000 }], 1_000_000, 1_000_600, {
      start: "green",
      end: "red",
    }),
    geometry(),
  );
  assert.equal(drawn[0].boxLeft, drawn[0].lineX + 12);
});

test("runMarkers: a start and an end per run inside the axis, an unfinished run's start only", () => {
  const runs = [
    { title: "a", file: "a.py", startedAt: 10_000, endedAt: 20_000 },
    { title: "b", file: "", startedAt: 30_000 },
    { title: "c", file: "c.py", startedAt: 1000, endedAt: 12_000 },
  ];
  assert.deepEqual(runMarkers(runs, 5, 40, { start: "g", end: "r" }), [
    { seconds: 10, color: "g", text: "▶ a.py", side: "left" },
    { seconds: 20, color: "r", text: "■ a.py", side: "right" },
    { seconds: 30, color: "g", text: "▶ b", side: "left" },
    { seconds: 12, color: "r", text: "■ c.py", side: "right" },
  ]);
});

test("unlabelled charts (memory) draw the lines only", () => {
  const ctx = new RecordingCanvas();
  const drawn = drawRunMarks(ctx, [{ seconds: 1_000_100, color: "g", text: "▶ a.py" }], geometry({ labelled: false }));
  assert.equal(ctx.lines.length, 1);
  assert.equal(ctx.texts.length, 0);
  assert.equal(drawn[0].visible, false);
});

test("a memory chart has a thin solid line across its plot at the GPU's total, labelled above it at the right: 140.4 GiB total", () => {
  // A GPU's memory chart at 2 canvas px per CSS px: the plot from x 144 over 1500 px, its top (the
  // axis' 140.4 GiB, the total) at y 40, the band for the label above it.
  const ctx = new RecordingCanvas();
  const label = memoryTotalLabel(143771)!;
  const drawn = drawTotalLine(ctx, {
    left: 144,
    width: 1500,
    y: 40,
    px: 2,
    label,
    color: "#3b3b3b",
    fontFamily: "sans-serif",
    labelBackground: "rgba(255, 255, 255, 0.75)",
  });
  assert.equal(label, "140.4 GiB total");
  assert.deepEqual(
    ctx.lines,
    [{ x: 144, top: 40, x1: 1644, bottom: 40, color: "#3b3b3b", width: 2 }],
    "1 CSS px, plot wide",
  );
  assert.deepEqual(
    ctx.texts.map((t) => t.text),
    ["140.4 GiB total"],
  );
  const [text] = ctx.texts;
  assert.equal(text.right, 1644 - 4, "the label ends 2 CSS px inside the plot's right edge");
  assert.ok(text.top + 11 * 2 <= 40, `the label is above the line (its top ${text.top}), clear of the data`);
  assert.ok(drawn.boxTop >= 40 - LABEL_BAND_PX * 2, "inside the band kept above the plot");
  assert.equal(drawn.boxBottom, 40 - 4, "2 CSS px above the line");
  assert.equal(ctx.rects.length, 1, "on a see-through background");
  assert.equal(ctx.textAlign, "right", "the context's state is restored for uPlot");
  // At 1 canvas px per CSS px the line sits on a pixel row's centre (crisp, not two half-lit rows).
  assert.equal(
    drawTotalLine(new RecordingCanvas(), {
      ...drawn,
      left: 0,
      width: 100,
      y: 20,
      px: 1,
      label,
      color: "",
      fontFamily: "",
      labelBackground: "",
    }).y,
    20.5,
  );
});

test("the total's label: the units policy's amount; no line where the total is unknown", () => {
  assert.equal(memoryTotalLabel(2 * 143771), "280.8 GiB total");
  assert.equal(memoryTotalLabel(8 * 143771), "1123.2 GiB total");
  assert.equal(memoryTotalLabel(900), "900 MiB total");
  for (const t of [null, undefined, 0, NaN]) assert.equal(memoryTotalLabel(t), undefined);
});

test("textLeftOf follows the canvas textAlign values", () => {
  assert.equal(textLeftOf(100, 40, "left"), 100);
  assert.equal(textLeftOf(100, 40, "start"), 100);
  assert.equal(textLeftOf(100, 40, "center"), 80);
  assert.equal(textLeftOf(100, 40, "right"), 60);
  assert.equal(textLeftOf(100, 40, "end"), 60);
});

test("a GPU has one line style on every chart: 8 distinct colours, dashed from the ninth GPU, dotted from the seventeenth; the legend shows the dash", () => {
  const palette = GPU_PALETTE.map((c) => c.colour);
  assert.equal(palette.length, 8, "eight colours");
  assert.equal(new Set(palette.map((c) => c.toLowerCase())).size, 8, "eight distinct colours");
  assert.equal(new Set(GPU_PALETTE.map((c) => c.name)).size, 8, "eight distinct names");
  assert.deepEqual(
    GPU_PALETTE.map((c) => c.name),
    ["blue", "orange", "green", "red", "purple", "brown", "pink", "olive"],
    "tab10's order, without grey and cyan",
  );
  assert.deepEqual(gpuLineStyle(1, palette), { color: "#ff7f0e" }, "GPU 1: orange on All GPUs and on its own charts");
  const eight = Array.from({ length: 8 }, (_, i) => gpuLineStyle(i, palette));
  assert.equal(new Set(eight.map((s) => s.color)).size, 8, "8 GPUs: 8 colours (GPUs 6 and 7 were GPU 0's and GPU 1's)");
  assert.deepEqual(
    eight.map((s) => [s.dash, lineBorderStyle(s)]),
    eight.map(() => [undefined, "solid"]),
    "8 GPUs: no dash anywhere",
  );
  assert.deepEqual(gpuLineStyle(6, palette), { color: "#e377c2" });
  assert.deepEqual(gpuLineStyle(7, palette), { color: "#bcbd22" });
  assert.deepEqual(gpuLineStyle(9, palette), { color: "#ff7f0e", dash: [6, 3] });
  assert.equal(lineBorderStyle(gpuLineStyle(9, palette)), "dashed", "GPU 9's legend marker is dashed like its line");
  assert.deepEqual(gpuLineStyle(17, palette), { color: "#ff7f0e", dash: [2, 2] });
  assert.equal(lineBorderStyle(gpuLineStyle(17, palette)), "dotted");
  const sixteen = Array.from({ length: 16 }, (_, i) => gpuLineStyle(i, palette));
  assert.equal(new Set(sixteen.map((s) => JSON.stringify(s))).size, 16, "16 GPUs: no two lines alike");
  assert.equal(
    new Set(sixteen.map((s) => `${s.color} ${lineBorderStyle(s)}`)).size,
    16,
    "16 GPUs: no two legend markers alike",
  );
});

/** sRGB [0-255] → OKLab [L, a, b] (Björn Ottosson's matrices): distances there follow how far apart colours look. */
function oklab([r, g, b]: [number, number, number]): [number, number, number] {
  const lin = (v: number) => ((v /= 255) <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  const [R, G, B] = [lin(r), lin(g), lin(b)];
  const l = Math.cbrt(0.4122214708 * R + 0.5363325363 * G + 0.0514459929 * B);
  const m = Math.cbrt(0.2119034982 * R + 0.6806995451 * G + 0.1073969566 * B);
  const s = Math.cbrt(0.0883024619 * R + 0.2817188376 * G + 0.6299787005 * B);
  return [
    0.2104542553 * l + 0.793617785 * m - 0.0040720468 * s,
    1.9779984951 * l - 2.428592205 * m + 0.4505937099 * s,
    0.0259040371 * l + 0.7827717662 * m - 0.808675766 * s,
  ];
}

test("the eight GPU colours stay apart and legible on VS Code's default themes, dark and light (each through legibleOn as the panel draws it)", () => {
  // editor.background and editor.foreground of VS Code's built-in themes.
  const themes: Record<string, [string, string]> = {
    "Dark Modern": ["#1f1f1f", "#cccccc"],
    "Light Modern": ["#ffffff", "#3b3b3b"],
    "Dark+": ["#1e1e1e", "#d4d4d4"],
    "Light+": ["#ffffff", "#000000"],
    "High Contrast": ["#000000", "#ffffff"],
    "High Contrast Light": ["#ffffff", "#292929"],
  };
  const distance = (x: string, y: string) => {
    const [p, q] = [oklab(parseColour(x)!.rgb), oklab(parseColour(y)!.rgb)];
    return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
  };
  for (const [theme, [bg, fg]] of Object.entries(themes)) {
    const shown = GPU_PALETTE.map((c) => legibleOn(c.colour, bg, fg));
    for (const c of shown)
      assert.ok(contrastRatio(parseColour(c)!.rgb, parseColour(bg)!.rgb) >= 3, `${theme}: ${c} at 3:1 on ${bg}`);
    for (let i = 0; i < shown.length; i++)
      for (let j = i + 1; j < shown.length; j++) {
        const d = distance(shown[i], shown[j]);
        // The old palette's nearest pairs on Dark Modern: GPU 3 and 5 (orange, yellow) 0.084, GPU 0 and 6 (blue, cyan) 0.104.
        assert.ok(
          d >= 0.1,
          `${theme}: GPU ${i} ${shown[i]} and GPU ${j} ${shown[j]} only ${d.toFixed(3)} apart in OKLab`,
        );
      }
  }
  // The measure itself: the old Dark Modern orange and yellow, reported hard to tell apart, fail it.
  assert.ok(distance("#d18616", "#cca700") < 0.1);
});

test("legibleOn: a chart colour pale on its background (or translucent) is darkened toward the foreground until 3:1 (WCAG 1.4.11); a legible one, or one that cannot be parsed, is kept", () => {
  assert.deepEqual(parseColour("#fff"), { rgb: [255, 255, 255], alpha: 1 });
  assert.deepEqual(parseColour("#3794ff80"), { rgb: [55, 148, 255], alpha: 128 / 255 });
  assert.deepEqual(parseColour("rgb(12, 34, 56)"), { rgb: [12, 34, 56], alpha: 1 });
  assert.deepEqual(parseColour("rgba(12, 34, 56, 0.5)"), { rgb: [12, 34, 56], alpha: 0.5 });
  assert.equal(parseColour("var(--x)"), null);
  assert.equal(Math.round(contrastRatio([0, 0, 0], [255, 255, 255])), 21);
  assert.equal(contrastRatio([255, 255, 255], [255, 255, 255]), 1);
  const legible = (c: string) => contrastRatio(parseColour(c)!.rgb, [255, 255, 255]) >= 3;
  // A pale peach on white (about 1.5:1) becomes a darker orange of at least 3:1, still warm (red > blue).
  const fixed = legibleOn("#f8c3a0", "#ffffff", "#333333");
  assert.ok(legible(fixed), fixed);
  assert.ok(parseColour(fixed)!.rgb[0] > parseColour(fixed)!.rgb[2], fixed);
  // VS Code's light charts.orange is #EA5C0055 (editor.findMatchHighlightBackground): peach as it
  // shows on white, legible made opaque, so it becomes its own hue without the alpha.
  assert.equal(legibleOn("#EA5C0055", "#ffffff", "#333333"), "#ea5c00");
  // Translucent and pale even opaque: opaque, then mixed toward the foreground.
  const pale = legibleOn("#f8c3a066", "#ffffff", "#333333");
  assert.match(pale, /^#[0-9a-f]{6}$/);
  assert.ok(legible(pale), pale);
  // Dark Modern's blue on its dark background is legible already; an unparsable value is kept.
  assert.equal(legibleOn("#3794ff", "#1f1f1f", "#cccccc"), "#3794ff");
  assert.equal(legibleOn("var(--x)", "#fff", "#000"), "var(--x)");
});
