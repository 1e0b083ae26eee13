#!/usr/bin/env node
// Takes the screenshots of the READMEs, the walkthrough and the extension's details page in a real
// VS Code (code-server + headless Chromium), the same set-up as `npm start` but with fresh state in
// .e2e-run/screenshot/ and a copy of examples/. It writes only the shots, into --out-dir: by default
// media/, replacing the committed ones (pass --out-dir DIR to look without changing the clone). Each shot is
// cropped to the part it shows and taken at 2 device pixels per CSS pixel (--scale), so that text
// stays readable when the image is shown at half its width:
//   media/screenshot-tree.png       the GPUs tree only, side bar at 300 px (2 x H200 from nvidia-smi, GPU 1 ticked)
//   media/screenshot-dashboard.png  the GPU dashboard only, side bar at 300 px
//   media/screenshot.png            the editor on examples/finetune_wrong_gpu.py with its GPU001
//                                   squiggle, and the Problems panel under it: the window made tall
//                                   enough for the whole file and wide enough for the problem's whole
//                                   message (no line or row cut; the log says so)
//   media/screenshot-history.png    the GPU History panel only (All GPUs on top, then each GPU) over
//                                   gpuPilot.history.minutes = 4: a real training run replayed on
//                                   GPU 1, the selected one (the stand-in nvidia-smi's train mode:
//                                   test/fixtures/nvidia-smi/h200-train, 104 s on an H200), started
//                                   from the editor with Run Active File and marked at its start and end
//   media/screenshot-slurm.png      the Slurm view only, side bar at 300 px: a test single-node Slurm
//                                   (scripts/slurm-cluster.mjs, 2 fake GPUs) with a running and a
//                                   pending job; skipped with the reason where Slurm cannot be started
// The dashboard shows SM activity from the fake's dmon replay of the H200 captures; the committed
// 2-GPU shots use FAKE_NVIDIA_SMI_MODE=spin (GPU 0 spins one thread block: busy but idle). The
// fake's train mode is added to whatever mode is given: GPU 1 is idle until the history shot's run.
//   media/screenshot-notebook.png   only with --only notebook: examples/notebook.ipynb with the
//                                   machine hover on "cuda" in its last cell (GPU 1 ticked)
//   media/screenshot-picker.png     only with --only picker: the "Select GPUs..." quick pick at its
//                                   default width; the log says whether a label or detail line is cut
// With FAKE_NVIDIA_SMI_MODE=x8 --suffix -8 the same with the constructed 8 x H200 fixture: each shot
// above with -8 before .png (tree, dashboard, dashboard-window, processes, history, slurm and the
// editor's; media/ keeps the first five).
//
//   node scripts/screenshot.mjs [--out-dir media] [--file finetune_wrong_gpu.py] [--only tree,dashboard,problem,history,slurm,picker,notebook]
//                               [--sidebar-width 300] [--suffix -8]
//
// Every option takes its value as `--opt value` or `--opt=value` (scripts/screenshotArgs.mjs).
// Each PNG is re-encoded losslessly by scripts/pngShrink.mjs (smaller: the .vsix carries some).
// Uses the real nvidia-smi when there is one on PATH, else the recorded 2 x H200 output (spin mode
// by default: one python3 process on GPU 0, spinning; FAKE_NVIDIA_SMI_MODE picks another). Bounded waits throughout; code-server's process group is killed at
// the end, also on failure.
import * as fs from "node:fs";
import * as path from "node:path";
import { launchBrowser, log, onShutdown, openGpuPilotView, repoRoot, waitForWorkbench } from "../test/e2e/lib/host.mjs";
import { startDevServer } from "../test/e2e/lib/devserver.mjs";
import { startWorkspace } from "./startWorkspace.mjs";
import { slurmAvailability, slurmCommand, startCluster, waitJob } from "./slurm-cluster.mjs";
import { shrinkPng } from "./pngShrink.mjs";

/**
 * In a webview's document (`h` its html element): how tall its content is (down to the body's
 * bottom margin, in CSS px) and how tall the pane shows it (the viewport). The html element's scrollHeight is never
 * below the viewport, so it said "535 px in 535 px" for 2, 8 and 16 GPUs alike.
 */
function contentFit(h) {
  const doc = h.ownerDocument;
  const body = doc.body;
  const bottom = body.getBoundingClientRect().bottom + (doc.defaultView?.scrollY ?? 0);
  const margin = parseFloat(doc.defaultView?.getComputedStyle(body).marginBottom ?? "0") || 0;
  return { scroll: Math.ceil(bottom + margin), client: h.clientHeight };
}
import { parseScreenshotArgs } from "./screenshotArgs.mjs";
import { fakeGpuCount, sidebarLine, treeShotLine } from "./screenshotLog.mjs";

const USAGE = `usage: node scripts/screenshot.mjs [OPTIONS]
  --out-dir DIR            where the shots go (default: media/, replacing the committed ones)
  --only LIST              tree,dashboard,problem,history,slurm (the default) and/or picker, notebook
  --file NAME              the examples/ file of the editor shot (default: finetune_wrong_gpu.py)
  --sidebar-width PX       side bar width (default: 300, VS Code's default)
  --suffix S               appended to each file name (e.g. -8 with FAKE_NVIDIA_SMI_MODE=x8)
  --width PX --height PX   the window (default: 1280 x 720); --history-height, --dashboard-height
  --scale N                device pixels per CSS pixel (default: 2)
  -h, --help               print this
Every option takes its value as --opt value or --opt=value (also one starting with a dash: --suffix -8).
FAKE_NVIDIA_SMI_MODE (when no nvidia-smi is on PATH): spin (the committed 2-GPU shots), busy, idle, x8, x16;
train (GPU 1 replays a real training run during the history shot) is always added.`;

let opts;
try {
  opts = parseScreenshotArgs(process.argv.slice(2), path.join(repoRoot, "media"));
} catch (e) {
  console.error(`screenshot.mjs: ${e.message}\n${USAGE}`);
  process.exit(2);
}
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}

let cs = null;
let browser = null;
let slurm = null;
/** The screenshot workspace (a copy of examples/), once started. */
let workspaceFolder = "";
/** The machine's GPUs when the stand-in nvidia-smi plays them (fakeGpuCount); null with a real one. */
let gpuCount = null;
/** The file the history shot's run writes while it runs (FAKE_NVIDIA_SMI_TRAIN_FLAG). */
let trainFlag = "";
const shutdown = onShutdown(async () => {
  if (browser) await Promise.race([browser.close().catch(() => {}), new Promise((r) => setTimeout(r, 10_000))]);
  if (cs) await cs.stop();
  if (slurm) await slurm.stop();
});
// The history shot waits for a real-length run (104 s) and some idle time around it.
const watchdog = setTimeout(() => {
  console.error("screenshot: gave up after 600 s");
  shutdown(124);
}, 600_000);
watchdog.unref();

const only = new Set(opts.only.split(",").map((x) => x.trim()));

async function main() {
  const outDir = path.resolve(opts["out-dir"]);
  fs.mkdirSync(outDir, { recursive: true });
  const runDir = path.join(repoRoot, ".e2e-run", "screenshot");
  // What the committed 2-GPU shots use, and the train mode: GPU 1 replays a real training run while
  // the history shot's stand-in script runs (it writes and removes TRAIN_FLAG).
  const mode = process.env.FAKE_NVIDIA_SMI_MODE || "spin";
  const env = {
    FAKE_NVIDIA_SMI_MODE: /\btrain\b/.test(mode) ? mode : `${mode},train`,
    FAKE_NVIDIA_SMI_TRAIN_FLAG: (trainFlag = path.join(repoRoot, ".e2e-run", "screenshot-train-running")),
  };
  fs.rmSync(trainFlag, { force: true });
  if (only.has("slurm")) {
    const why = slurmAvailability();
    if (why) {
      log(`no Slurm view shot: ${why}`);
      only.delete("slurm");
    } else {
      slurm = await startCluster({ gpus: 2, cpus: 4 });
      env.SLURM_CONF = slurm.conf;
      // A running 1-GPU job and a 2-GPU job that waits for it.
      for (const [name, gpus, time] of [
        ["finetune", "--gpus-per-node=1", "2:00:00"],
        ["ddp_train", "--gres=gpu:2", "1-00:00:00"],
      ]) {
        const r = await slurmCommand(slurm.env, "sbatch", [
          "--parsable",
          `--job-name=${name}`,
          gpus,
          `--time=${time}`,
          `--chdir=${slurm.jobsDir}`,
          "--wrap",
          "sleep 600",
        ]);
        if (name === "finetune") await waitJob(slurm.env, String(r.stdout).trim(), { states: ["RUNNING"] });
      }
    }
  }
  const started = await startDevServer({
    runDir,
    folder: (workspaceFolder = startWorkspace({
      repoRoot,
      runDir: path.join(repoRoot, ".e2e-run", "screenshot-workspace"),
    })),
    freshUserData: true,
    env,
    settings: {
      "workbench.colorTheme": "Default Light Modern",
      "editor.minimap.enabled": false,
      "window.commandCenter": false,
      // The notebook shot's hover under its line, so that the cell above (the write) stays in view.
      "editor.hover.above": false,
      // The history shot's window: the replayed 104 s run and the idle time around it fill most of it.
      "gpuPilot.history.minutes": HISTORY_MINUTES,
    },
  });
  cs = started.cs;
  gpuCount = started.smi.fake ? fakeGpuCount(mode) : null;
  if (started.smi.fake) {
    const machine = /\bx16\b/.test(mode)
      ? "constructed 16 x H200"
      : /\bx8\b/.test(mode)
        ? "constructed 8 x H200"
        : "recorded 2 x H200";
    log(`nvidia-smi: the ${machine} output (test/fixtures/bin/nvidia-smi)`);
  }
  browser = await launchBrowser(path.join(runDir, "chromium-profile"), {
    viewport: { width: Number(opts.width), height: Number(opts.height) },
    deviceScaleFactor: Number(opts.scale),
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  await page.goto(started.url, { waitUntil: "domcontentloaded", timeout: 60_000 });
  await waitForWorkbench(page);

  const suffix = opts.suffix;
  // 1. The GPU Pilot container at the default side bar width (300 px): the tree and the dashboard.
  await openGpuPilotView(page);
  const sidebar = page.locator(".part.sidebar");
  await sidebar
    .locator(".monaco-list-row .label-name", { hasText: /^GPU 1$/ })
    .first()
    .waitFor({ timeout: 30_000 });
  // The side bar shots at this width (the dashboard run also takes the Processes tab).
  const sideBarShots = [
    ...(only.has("tree") ? ["tree"] : []),
    ...(only.has("dashboard") ? ["dashboard", "processes"] : []),
    ...(only.has("slurm") ? ["Slurm"] : []),
  ];
  await setSidebarWidth(page, sidebar, Number(opts["sidebar-width"]), sideBarShots, true);
  // Tick GPU 1 (the tree's checkbox), so the status bar and the run command show a selection.
  const gpu1 = sidebar
    .locator(".monaco-list-row", { has: page.locator(".label-name", { hasText: /^GPU 1$/ }) })
    .first();
  const checkbox = gpu1.locator(".custom-view-tree-node-item-checkbox, input[type=checkbox], .monaco-checkbox").first();
  if (await checkbox.count()) {
    // Up to three clicks: on a loaded machine a click can land before the row takes it (the history
    // shot's run then asked for GPUs and never ran).
    const ticked = page.locator(".part.statusbar", { hasText: /GPU[^\n]*1/ }).first();
    for (let attempt = 1; attempt <= 3; attempt++) {
      await checkbox.click();
      if (
        await ticked.waitFor({ timeout: 10_000 }).then(
          () => true,
          () => false,
        )
      )
        break;
      log(`status bar shows no GPU 1 selection after click ${attempt}`);
    }
  } else {
    log("no checkbox found in the GPU 1 row");
  }
  await page.mouse.move(5, Number(opts.height) - 5); // no hover tooltips in the shot
  if (only.has("tree")) {
    // Only the tree: the dashboard's pane collapsed; the view's title and its rows, not the empty space under them.
    await setPaneExpanded(page, "Dashboard", false);
    await setPaneExpanded(page, "GPUs", true);
    await setPaneExpanded(page, "Slurm", false); // shown where sinfo is on PATH
    const rows = sidebar.locator(".monaco-list-row");
    await rows.last().waitFor({ timeout: 10_000 });
    await page.waitForTimeout(1500);
    await page.mouse.move(5, Number(opts.height) - 5);
    // The rows of this shot, in the GPUs pane (the others collapsed): the tree renders only the rows in view.
    const treePane = sidebar.locator(".pane", { has: page.locator(".pane-header", { hasText: /^\s*GPUs/i }) }).first();
    const inView = await treePane.locator(".monaco-list-row .label-name").allTextContents();
    log(treeShotLine(`screenshot-tree${suffix}.png`, inView, gpuCount));
    await shotOf(
      page,
      path.join(outDir, `screenshot-tree${suffix}.png`),
      [sidebar.locator(".composite.title").first(), rows.last()],
      { padBottom: 10 },
    );
    // Rows the side bar cuts (wider inside than the box that ends them in an ellipsis), read after the
    // shot as it shows them: at 300 px the 8-GPU tree's `7007 jupyter-kernel 812 MiB · unkn…` was seen only by eye.
    const cutRows = await treePane.evaluate((pane) =>
      [...pane.querySelectorAll(".monaco-list-row .monaco-icon-label-container")]
        .filter((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
        .map((e) => [...e.querySelectorAll(".label-name, .label-description")].map((x) => x.textContent).join(" ")),
    );
    log(
      `tree rows at ${Math.round((await sidebar.boundingBox())?.width ?? 0)} px: ${cutRows.length ? `CUT ${JSON.stringify(cutRows)}` : "none cut"}`,
    );
  }
  if (only.has("dashboard")) await dashboardShot(page, sidebar, outDir, suffix);
  // The Slurm shot hides the GPU views, which stops the nvidia-smi stream: the History panel holds it
  // meanwhile (closed again before the editor shots), so that the History shot's window has no break.
  const holdStream = only.has("slurm") && only.has("history");
  if (holdStream) await runCommand(page, "GPU Pilot: Show GPU History", "Show GPU History");
  if (only.has("slurm")) await slurmShot(page, sidebar, outDir, suffix);
  if (only.has("picker")) await pickerShot(page, outDir, suffix);

  // Back to a narrower side bar: the editor shots are cropped to the editor, which gets the room.
  await setPaneExpanded(page, "GPUs", true);
  await setPaneExpanded(page, "Dashboard", false); // one webview (the history panel's) in the page
  if (holdStream) {
    await page.waitForTimeout(1500); // the tree visible (streaming) before the panel lets go
    await runCommand(page, "View: Close All Editors", "Close All Editors");
  }
  const editorShots = ["problem", "history", "notebook"].filter((x) => only.has(x));
  // No editor shot asked for (--only dashboard): the side bar keeps its width, and nothing is logged.
  if (editorShots.length) await setSidebarWidth(page, sidebar, 220, editorShots, false);
  if (only.has("problem")) await problemShot(page, outDir, suffix);
  if (only.has("history")) await historyShot(page, outDir, suffix);
  if (only.has("notebook")) await notebookShot(page, outDir);
}

/**
 * Sets the side bar's width to `width` CSS pixels by dragging its right edge, and logs it with the
 * shots it is for (`shots`) and whether they show the side bar (`inShot`) or only give the editor room.
 */
async function setSidebarWidth(page, sidebar, width, shots, inShot) {
  const box = await sidebar.boundingBox();
  if (!box) return log("no side bar to resize");
  await resizeSidebar(page, sidebar, width - box.width);
  const after = await sidebar.boundingBox();
  log(sidebarLine(Math.round(after?.width ?? 0), shots, inShot));
}

/** Expands or collapses the side bar pane whose header reads `title` (a click on its header). */
async function setPaneExpanded(page, title, expanded) {
  const header = page.locator(".part.sidebar .pane-header", { hasText: new RegExp(`^\\s*${title}`, "i") }).first();
  if (!(await header.count())) return log(`no pane header ${title}`);
  const now = (await header.getAttribute("aria-expanded")) === "true";
  if (now !== expanded) await header.click();
}

/**
 * The GPU dashboard (a webview view): its pane alone in the container, the window tall enough for
 * every card, a few seconds of streamed samples for the sparklines; cropped from the container's
 * title to the last card.
 */
async function dashboardShot(page, sidebar, outDir, suffix) {
  await page.setViewportSize({ width: Number(opts.width), height: Number(opts["dashboard-height"]) });
  await setPaneExpanded(page, "Dashboard", true);
  await setPaneExpanded(page, "GPUs", false);
  await setPaneExpanded(page, "Slurm", false);
  const frame = page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
  // A card per GPU, or (from 5 GPUs: dashboardLayout.ts) a two-line row per GPU.
  const cards = frame.locator("main > section.gpu, main > section.gpu-row");
  await cards.first().waitFor({ timeout: 30_000 });
  await page.waitForTimeout(10_000); // sparklines: some samples
  const compact = (await frame.locator("main > section.gpu-row").count()) > 0;
  if (!compact) {
    // SM activity comes from nvidia-smi dmon from its third sample on: wait for a value in the SM bar.
    await frame
      .locator('[data-metric="sm"] .metric-value', { hasText: /%$/ })
      .first()
      .waitFor({ timeout: 15_000 })
      .catch(() => log("dashboard: no SM activity shown"));
    log(
      `dashboard SM activity: ${JSON.stringify(await frame.locator('[data-metric="sm"] .metric-value').allTextContents())}`,
    );
  }
  await page.mouse.move(5, Number(opts["dashboard-height"]) - 5);
  log(`dashboard: ${await cards.count()} ${compact ? "compact rows" : "cards"}`);
  await shotOf(
    page,
    path.join(outDir, `screenshot-dashboard${suffix}.png`),
    [sidebar.locator(".composite.title").first(), cards.last()],
    { padBottom: 8, bottomOf: 1 },
  );
  // The window at its default height: does every GPU fit the pane without scrolling (compact)?
  await page.setViewportSize({ width: Number(opts.width), height: Number(opts.height) });
  await page.waitForTimeout(1500);
  const fit = await frame.locator("html").evaluate(contentFit);
  log(
    `dashboard at ${opts.height} px: content ${fit.scroll} px in ${fit.client} px (${fit.scroll <= fit.client + 1 ? "fits, no scrolling" : "scrolls"})`,
  );
  await shotOf(
    page,
    path.join(outDir, `screenshot-dashboard-window${suffix}.png`),
    [sidebar.locator(".composite.title").first(), sidebar],
    { padBottom: 0 },
  );
  // The Processes tab: every GPU's processes, sortable, filterable, Stop/Kill.
  await page.setViewportSize({ width: Number(opts.width), height: Number(opts["dashboard-height"]) });
  await frame.locator('button[data-view="processes"]').click();
  const procs = frame.locator("table.ptable tbody");
  await procs
    .first()
    .waitFor({ timeout: 10_000 })
    .catch(() => log("dashboard: no process table"));
  await page.waitForTimeout(1000);
  await page.mouse.move(5, Number(opts["dashboard-height"]) - 5);
  log(
    `processes: ${await procs.count()} rows; headers ${JSON.stringify(await frame.locator("table.ptable th button").allTextContents())}`,
  );
  // The header: one line, no label wider than its cell (the webview's own check, as the e2e test reads it).
  const header = await frame.locator("table.ptable thead th button").evaluateAll((buttons) => {
    const boxes = buttons.map((b) => b.getBoundingClientRect());
    const height = Math.min(...boxes.map((r) => r.height));
    const lines = Math.round((Math.max(...boxes.map((r) => r.bottom)) - Math.min(...boxes.map((r) => r.top))) / height);
    const clipped = buttons
      .filter((b) => {
        const th = b.closest("th");
        const cell = th.getBoundingClientRect();
        const style = th.ownerDocument.defaultView.getComputedStyle(th);
        const r = b.getBoundingClientRect();
        return r.right > cell.right - parseFloat(style.paddingRight) + 0.5 || b.scrollWidth > b.clientWidth + 0.5;
      })
      .map((b) => b.textContent);
    return { lines, clipped, width: buttons[0]?.closest("table")?.getBoundingClientRect().width };
  });
  log(
    `processes header: ${header.lines} line(s), ${header.clipped.length ? `CLIPPED ${JSON.stringify(header.clipped)}` : "nothing clipped"} (table ${Math.round(header.width ?? 0)} px)`,
  );
  // The rows' numbers: none cut by the fixed layout (the webview's cellsClipped, as the e2e test reads it).
  const cut = await frame
    .locator(["gpu", "pid", "memory", "sm", "cpu"].map((c) => `table.ptable tr.line1 td.col-${c}`).join(", "))
    .evaluateAll((cells) =>
      cells.filter((td) => td.scrollWidth > td.clientWidth + 0.5).map((td) => `${td.className} ${td.textContent}`),
    );
  log(`processes numbers: ${cut.length ? `CUT ${JSON.stringify(cut)}` : "none cut"}`);
  const lastRow = (await procs.count()) > 0 ? procs.last() : frame.locator("div.processes");
  await shotOf(
    page,
    path.join(outDir, `screenshot-processes${suffix}.png`),
    [sidebar.locator(".composite.title").first(), lastRow],
    { padBottom: 8, bottomOf: 1 },
  );
  await frame.locator('button[data-view="gpus"]').click();
  await page.setViewportSize({ width: Number(opts.width), height: Number(opts.height) });
}

/** The Slurm view alone in the container (the other panes collapsed), at the side bar's width; from the container's title to its last row. */
async function slurmShot(page, sidebar, outDir, suffix = "") {
  await setPaneExpanded(page, "Dashboard", false);
  await setPaneExpanded(page, "GPUs", false);
  await setPaneExpanded(page, "Slurm", true);
  const pane = page
    .locator(".part.sidebar .pane", { has: page.locator(".pane-header", { hasText: /^\s*Slurm/i }) })
    .first();
  await pane.locator(".monaco-list-row", { hasText: "ddp_train" }).first().waitFor({ timeout: 60_000 });
  await page.waitForTimeout(1500);
  await page.mouse.move(5, Number(opts.height) - 5);
  log(`slurm rows: ${JSON.stringify(await pane.locator(".monaco-list-row").allTextContents())}`);
  await shotOf(
    page,
    path.join(outDir, `screenshot-slurm${suffix}.png`),
    [sidebar.locator(".composite.title").first(), pane.locator(".monaco-list-row").last()],
    { padBottom: 10 },
  );
  await setPaneExpanded(page, "Slurm", false);
}

/**
 * The "Select GPUs..." quick pick at VS Code's default width: logs each row's label, description and
 * detail and whether the workbench cut any of them (an element wider inside than its box), then
 * shoots the widget and closes it.
 */
async function pickerShot(page, outDir, suffix) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input").first();
  await input.waitFor({ timeout: 15_000 });
  await input.fill(">GPU Pilot: Select GPUs");
  const command = page
    .locator(".quick-input-widget .monaco-list-row", { hasText: /GPU Pilot: Select GPUs\.\.\./ })
    .first();
  await command.waitFor({ timeout: 15_000 });
  await command.click();
  const widget = page.locator(".quick-input-widget").first();
  await widget
    .locator(".monaco-list-row", { hasText: "GPU 0" })
    .first()
    .waitFor({ timeout: 15_000 })
    .catch(async (e) => {
      await page.screenshot({ path: path.join(outDir, "picker-failed.png") });
      throw e;
    });
  await page.mouse.move(5, Number(opts.height) - 5); // no hover tooltip in the shot
  await page.waitForTimeout(1500);
  const rows = await widget.evaluate((w) =>
    [...w.querySelectorAll(".monaco-list-row")].map((row) => {
      // Cut: a box that ends its text with an ellipsis (text-overflow) and is narrower than its text.
      const cut = [...row.querySelectorAll("*")]
        .filter(
          (e) =>
            e.textContent &&
            e.ownerDocument.defaultView.getComputedStyle(e).textOverflow === "ellipsis" &&
            e.clientWidth > 0 &&
            e.scrollWidth > e.clientWidth + 1,
        )
        .map((e) => e.textContent);
      return { text: row.textContent, cut };
    }),
  );
  log(`picker: ${Math.round((await widget.boundingBox())?.width ?? 0)} px wide`);
  for (const r of rows)
    log(`picker row: ${JSON.stringify(r.text)}${r.cut.length ? ` CUT: ${JSON.stringify(r.cut)}` : " (nothing cut)"}`);
  await shotOf(page, path.join(outDir, `screenshot-picker${suffix}.png`), [widget], { padBottom: 0 });
  await page.keyboard.press("Escape");
}

/** Drags the side bar's right edge by `dx` CSS pixels (wider when positive). */
async function resizeSidebar(page, sidebar, dx) {
  const box = await sidebar.boundingBox();
  if (!box) return log("no side bar to resize");
  await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width + 1 + dx, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
}

/** The run the history shot marks: a stand-in of verify/train/train.py in the workspace copy. */
const HISTORY_RUN = "train.py";
/** gpuPilot.history.minutes for the shots: the run (104 s) and the idle time around it fill most of it. */
const HISTORY_MINUTES = 4;

/**
 * The stand-in script of the history shot: while it runs (104 s, as the real run on the H200 did)
 * it keeps TRAIN_FLAG with its pid, so that the stand-in nvidia-smi replays that run's samples on the
 * GPU (test/fixtures/nvidia-smi/h200-train), and prints the real run's lines at their times.
 */
function trainStandIn(flag) {
  const text = fs.readFileSync(
    path.join(repoRoot, "test", "fixtures", "nvidia-smi", "h200-train", "train.log"),
    "utf8",
  );
  const lines = text
    .split("\n")
    .map((l) => /^\s*([\d.]+) (.*)$/.exec(l))
    .filter((m) => m !== null);
  const log = lines.filter((m) => !/^(START|END) /.test(m[2])).map((m) => [Number(m[1]), m[2]]);
  const end = Number(lines.find((m) => /^END /.test(m[2]))?.[1] ?? 104);
  return [
    '"""A stand-in for verify/train/train.py (a 0.94 B parameter Transformer trained on an H200 for 104 s).',
    "",
    "GPU Pilot's screenshot script runs it on the selected GPU: while it runs, the stand-in nvidia-smi",
    "replays what the real run did to that GPU (test/fixtures/nvidia-smi/h200-train), and it prints the",
    'real run\'s output at the same times."""',
    "import os",
    "import time",
    "",
    `FLAG = ${JSON.stringify(flag)}`,
    `LINES = ${JSON.stringify(log)}`,
    "",
    "t0 = time.time()",
    "with open(FLAG, 'w') as f:",
    "    f.write(str(os.getpid()))",
    "try:",
    "    for at, line in LINES:",
    "        time.sleep(max(0.0, at - (time.time() - t0)))",
    "        print(f'{at:7.2f} {line}', flush=True)",
    `    time.sleep(max(0.0, ${end} - (time.time() - t0)))`,
    "finally:",
    "    os.remove(FLAG)",
    "",
  ].join("\n");
}

/**
 * 3. The GPU History panel over a real-length run on the selected GPU (GPU 1): the panel is opened
 * first (it holds the nvidia-smi stream whatever the side bar shows), then train.py runs from the
 * editor with Run Active File (104 s; its start and end are marked on GPU 1's chart and on All GPUs
 * only, the labels beside their markers), then 30 s more of idle GPU; the window is made taller
 * (--history-height, then as tall as the panel's content) so that the All GPUs chart and every
 * GPU's charts fit in the editor, 8 or 16 GPUs too.
 */
async function historyShot(page, outDir, suffix = "") {
  await page.setViewportSize({ width: Number(opts.width), height: Number(opts["history-height"]) });
  fs.writeFileSync(path.join(workspaceFolder, HISTORY_RUN), trainStandIn(trainFlag));
  // The bottom panel (Problems, from the problem shot) closed: the history gets the editor's whole height.
  await hidePanel(page);
  // The script's tab first (Quick Open from the editor, not from inside the panel's webview), then
  // the panel beside it; back on the script's tab after some idle time.
  await quickOpen(page, HISTORY_RUN);
  const scriptTab = page.locator(".tabs-container .tab", { hasText: HISTORY_RUN }).first();
  await scriptTab.waitFor({ timeout: 15_000 });
  await runCommand(page, "GPU Pilot: Show GPU History", "Show GPU History");
  await page.locator(".tabs-container .tab", { hasText: "GPU History" }).first().waitFor({ timeout: 15_000 });
  await page.waitForTimeout(20_000); // idle before the run
  await scriptTab.click();
  await page.locator(".part.editor .monaco-editor textarea").first().focus();
  const started = Date.now();
  await runCommand(page, "GPU Pilot: Run Active File on Selected GPUs", "Run Active File on Selected GPUs");
  // The run: its flag appears when it starts and goes when it ends (bounded: 3 min).
  const until = async (cond, what, ms) => {
    for (const end = Date.now() + ms; Date.now() < end; await page.waitForTimeout(500)) if (cond()) return true;
    log(`history: ${what} not seen in ${ms / 1000} s`);
    return false;
  };
  if (await until(() => fs.existsSync(trainFlag), "the run's start", 120_000)) {
    log(`history: ${HISTORY_RUN} started ${Math.round((Date.now() - started) / 1000)} s after Run`);
    await until(() => !fs.existsSync(trainFlag), "the run's end", 180_000);
    log(`history: ${HISTORY_RUN} ended after ${Math.round((Date.now() - started) / 1000)} s`);
  }
  await page.waitForTimeout(30_000); // idle after the run
  await runCommand(page, "Notifications: Clear All Notifications", "Clear All Notifications");
  await hidePanel(page); // the run's terminal
  await runCommand(page, "GPU Pilot: Show GPU History", "Show GPU History");
  const frame = page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
  await frame.locator("section.gpu .uplot").nth(3).waitFor({ timeout: 30_000 });
  await frame.locator("#summary", { hasText: /samples per GPU/ }).waitFor({ timeout: 30_000 });
  await page.waitForTimeout(3_000);
  // Every GPU's charts in the shot: the window as tall as the panel's content (with 8 GPUs the panel
  // scrolled and the shot, clamped to the window, ended in GPU 2's charts).
  for (let attempt = 1; attempt <= 3; attempt++) {
    const fit = await frame.locator("html").evaluate(contentFit);
    log(`history: content ${fit.scroll} px in ${fit.client} px${fit.scroll <= fit.client + 1 ? " (all shown)" : ""}`);
    if (fit.scroll <= fit.client + 1) break;
    const vp = page.viewportSize();
    await page.setViewportSize({ width: vp.width, height: vp.height + fit.scroll - fit.client + 8 });
    await page.waitForTimeout(2_000);
  }
  await page.mouse.move(5, Number(opts.height) - 5);
  const summary = await frame.locator("#summary").textContent();
  log(`history: ${summary}`);
  if (/ 0 run\(s\)/.test(summary ?? ""))
    log(`history: ${HISTORY_RUN} did not run (no GPU ticked?): the shot has no run markers`);
  // Every chart's plot area should start at the same x: a selected GPU's wider edge pushed its plots right.
  const lefts = await frame
    .locator("html")
    .evaluate((h) =>
      [...h.ownerDocument.querySelectorAll(".uplot .u-over")].map((o) => o.getBoundingClientRect().left),
    );
  const distinct = [...new Set(lefts.map((x) => Math.round(x * 10) / 10))];
  log(
    `history: plot areas of ${lefts.length} charts start at x ${distinct.join(", ")} px${distinct.length === 1 ? " (lined up)" : " (NOT lined up)"}`,
  );
  // The editor's width, from its tabs down to the last GPU's charts.
  await shotOf(
    page,
    path.join(outDir, `screenshot-history${suffix}.png`),
    [page.locator(".part.editor"), frame.locator("section.gpu").last()],
    { padBottom: 16, bottomOf: 1 },
  );
}

/** Runs the command `title` from the Command Palette (`row`: text of its row); nothing when it is not offered. */
async function runCommand(page, title, row) {
  await page.keyboard.press("F1");
  await page.locator(".quick-input-widget input").first().waitFor({ timeout: 15_000 });
  await page.locator(".quick-input-widget input").first().fill(`>${title}`);
  await page
    .locator(".quick-input-widget .monaco-list-row", { hasText: row })
    .first()
    .waitFor({ timeout: 10_000 })
    .then(
      () => page.keyboard.press("Enter"),
      () => page.keyboard.press("Escape"),
    );
}

/** Closes the bottom panel (View: Hide Panel); nothing when it is closed already. */
const hidePanel = (page) => runCommand(page, "View: Hide Panel", "Hide Panel");

/**
 * Opens the workspace file `name` with Quick Open (Ctrl+P); up to three tries (a file the script has
 * just written may not be listed yet on a loaded machine).
 */
async function quickOpen(page, name) {
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input").first();
    await input.waitFor({ timeout: 15_000 });
    await input.fill(name);
    const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: name }).first();
    const listed = await row.waitFor({ timeout: 15_000 }).then(
      () => true,
      (e) => {
        if (attempt >= 3) throw e;
        return false;
      },
    );
    if (listed) return page.keyboard.press("Enter");
    log(`quick open: ${name} not listed (try ${attempt})`);
    await page.keyboard.press("Escape");
    await page.waitForTimeout(2000);
  }
}

async function problemShot(page, outDir, suffix = "") {
  // 2. A file with a GPU001: quick open, wait for the squiggle, open the Problems panel. The window
  // is made tall enough for the whole file above the panel and wide enough for the problem's whole
  // message (the README's shot cut line 5 at the top and the message at "it has no ...").
  const fileLines = fs
    .readFileSync(path.join(workspaceFolder, opts.file), "utf8")
    .replace(/\n$/, "")
    .split("\n").length;
  await page.setViewportSize({ width: Number(opts.width), height: Math.max(Number(opts.height), 960) });
  await quickOpen(page, opts.file);
  await page.locator(".tabs-container .tab", { hasText: opts.file }).first().waitFor({ timeout: 15_000 });
  await page.locator(".part.editor .monaco-editor .squiggly-error").first().waitFor({ timeout: 60_000 });
  await page.keyboard.press("Control+Shift+M");
  const problem = page.locator(".markers-panel .monaco-list-row", { hasText: "GPU001" }).first();
  await problem.waitFor({ timeout: 20_000 });
  log(`problem: ${(await problem.textContent())?.slice(0, 160)}`);
  const line = (await problem.textContent())?.match(/\[Ln (\d+)/)?.[1] ?? "1";
  const editorText = page.locator(".part.editor .monaco-editor textarea").first();
  /** Line 1 at the top (Ctrl+Home), then the cursor to the GPU001 line (Go to Line) so that its lightbulb shows. */
  const goToProblemLine = async () => {
    await editorText.focus();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Control+G");
    await page.locator(".quick-input-widget input").first().waitFor({ timeout: 10_000 });
    await page.keyboard.type(line);
    await page.keyboard.press("Enter");
  };
  await goToProblemLine();
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.waitForTimeout(800);
    const fit = await framing(page, problem);
    log(
      `problem shot framing: lines ${fit.first}-${Math.min(fit.last, fileLines)} of ${fileLines}${fit.firstCut ? ", first cut" : ""}${fit.lastCut ? ", last cut" : ""}; problem row ${fit.rowCut > 1 ? `${Math.round(fit.rowCut)} px too narrow` : "whole"}`,
    );
    const missing = fit.first > 1 || fit.firstCut || fit.last < fileLines || fit.lastCut;
    if (!missing && fit.rowCut <= 1) break;
    const vp = page.viewportSize();
    await page.setViewportSize({
      width: vp.width + (fit.rowCut > 1 ? Math.ceil(fit.rowCut) + 24 : 0),
      height: vp.height + (missing ? Math.max(1, fileLines - fit.last + 1) * fit.lineHeight + 8 : 0),
    });
    await goToProblemLine();
  }
  await page
    .locator(".part.editor .monaco-editor .codicon-light-bulb, .part.editor .monaco-editor .lightBulbWidget")
    .first()
    .waitFor({ timeout: 10_000 })
    .catch(() => log("no lightbulb shown"));
  await page.mouse.move(5, page.viewportSize().height - 5);
  // The editor and the Problems panel down to its last row (no side bar, no empty panel space).
  const markers = page.locator(".markers-panel .monaco-list-row");
  await shotOf(page, path.join(outDir, `screenshot${suffix}.png`), [page.locator(".part.editor"), markers.last()], {
    padBottom: 8,
  });
  await page.setViewportSize({ width: Number(opts.width), height: Number(opts.height) });
}

/**
 * What the problem shot shows: the first and last editor lines in view (by their line numbers) and
 * whether either is cut by the editor's edge, the line height, and by how many px the problem row's
 * widest cut text (an ellipsis) is too narrow (0: nothing cut).
 */
async function framing(page, problem) {
  const rowCut = await problem.evaluate((row) =>
    Math.max(
      0,
      ...[...row.querySelectorAll("*")]
        .filter((e) => e.clientWidth > 0 && e.ownerDocument.defaultView.getComputedStyle(e).textOverflow === "ellipsis")
        .map((e) => e.scrollWidth - e.clientWidth),
    ),
  );
  const lines = await page.evaluate(() => {
    // runs in the page
    const editor = globalThis.document.querySelector(".part.editor .monaco-editor .overflow-guard");
    const box = editor.getBoundingClientRect();
    const numbers = [...globalThis.document.querySelectorAll(".part.editor .monaco-editor .line-numbers")]
      .map((e) => ({ n: Number(e.textContent), r: e.getBoundingClientRect() }))
      .filter((x) => Number.isFinite(x.n) && x.r.height > 0 && x.r.bottom > box.top && x.r.top < box.bottom)
      .sort((a, b) => a.n - b.n);
    const first = numbers[0];
    const last = numbers[numbers.length - 1];
    return {
      first: first?.n ?? 0,
      firstCut: first ? first.r.top < box.top - 0.5 : true,
      last: last?.n ?? 0,
      lastCut: last ? last.r.bottom > box.bottom + 0.5 : true,
      lineHeight: first?.r.height ?? 19,
    };
  });
  return { ...lines, rowCut };
}

async function notebookShot(page, outDir) {
  // 3. examples/notebook.ipynb: its cell 3 sets CUDA_VISIBLE_DEVICES after cell 2 initialised CUDA
  // (GPU001), so "cuda" in cell 4 is still GPU 0; the hover says so (GPU Pilot's selection, GPU 1,
  // does not reach notebook kernels).
  await page.setViewportSize({ width: Number(opts.width), height: Number(opts.height) }); // the history shot makes it taller
  await hidePanel(page); // the Problems panel of the problem shot would hide the last cell
  await runCommand(page, "View: Close All Editors", "Close All Editors"); // the other shots' tabs
  await quickOpen(page, "notebook.ipynb");
  const failed = async (why) => {
    await page.screenshot({ path: path.join(outDir, "notebook-failed.png") });
    return new Error(`notebook shot: ${why} (notebook-failed.png)`);
  };
  // The `"cuda"` token of the last cell, found in the page (the cells render after the built-in
  // vscode.ipynb extension starts); its box in CSS pixels. Then its hover, retried while the
  // language server starts and lints the cells.
  let box = null;
  for (let i = 0; i < 60 && !box; i++) {
    box = await page.evaluate(() => {
      // runs in the page
      const span = [...globalThis.document.querySelectorAll(".view-line span")].find(
        (x) => x.children.length === 0 && x.textContent === '"cuda"',
      );
      const r = span?.getBoundingClientRect();
      return r && r.width > 0 ? { x: r.x, y: r.y, width: r.width, height: r.height } : null;
    });
    if (!box) await page.waitForTimeout(1000);
  }
  if (!box) throw await failed('no "cuda" token in the notebook');
  const hover = page.locator(".monaco-hover:visible", { hasText: "GPU 0" }).first();
  for (let i = 0; i < 10 && !(await hover.isVisible()); i++) {
    await page.mouse.move(5, Number(opts.height) - 5);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2 + (i % 2));
    await hover.waitFor({ timeout: 5_000 }).catch(() => undefined);
  }
  if (!(await hover.isVisible())) throw await failed('no hover saying "GPU 0" on "cuda"');
  log(`notebook hover: ${(await hover.textContent().catch(() => ""))?.slice(0, 200)}`);
  await shotOf(page, path.join(outDir, "screenshot-notebook.png"), [page.locator(".part.editor")], { padBottom: 0 });
}

/**
 * Screenshots the smallest rectangle holding every element of `parts` (playwright locators), its
 * bottom edge that of `parts[bottomOf]` when given (else the lowest part's) and `padBottom` CSS
 * pixels lower, clamped to the viewport, and writes it to `file` (PNG).
 * Throws when a part has no box (not visible 15 s after the call).
 */
async function shotOf(page, file, parts, { padBottom = 0, bottomOf } = {}) {
  // On a loaded machine a view can still be laying itself out (the fresh user's dashboard shot
  // once failed here while npm test ran beside it): wait up to 15 s for each part to be visible.
  await Promise.all(parts.map((p) => p.waitFor({ state: "visible", timeout: 15_000 }).catch(() => undefined)));
  // A view that re-renders (the Processes tab when pmon's SM % arrives) can swap an element between
  // the wait and the measure: its box is then null for a moment, so ask again, three times at most.
  let boxes = await Promise.all(parts.map((p) => p.boundingBox()));
  for (let i = 0; i < 3 && boxes.some((b) => !b); i++) {
    await page.waitForTimeout(500);
    boxes = await Promise.all(parts.map((p) => p.boundingBox()));
  }
  if (boxes.some((b) => !b)) throw new Error(`${path.basename(file)}: a part to show is not visible`);
  const vp = page.viewportSize();
  const x = Math.max(0, Math.floor(Math.min(...boxes.map((b) => b.x))));
  const y = Math.max(0, Math.floor(Math.min(...boxes.map((b) => b.y))));
  const right = Math.min(vp.width, Math.ceil(Math.max(...boxes.map((b) => b.x + b.width))));
  const lowest =
    bottomOf === undefined ? Math.max(...boxes.map((b) => b.y + b.height)) : boxes[bottomOf].y + boxes[bottomOf].height;
  const bottom = Math.min(vp.height, Math.ceil(lowest + padBottom));
  await page.screenshot({ path: file, clip: { x, y, width: right - x, height: bottom - y } });
  // Lossless, 10-20 % smaller: the .vsix that carries some of these stays under its limit.
  shrinkPng(file);
  // Relative to where the script was started when the file is under it, else the full path (--out-dir elsewhere).
  const shown = file.startsWith(process.cwd() + path.sep) ? path.relative(process.cwd(), file) : file;
  log(`wrote ${shown} (${right - x} x ${bottom - y} CSS px)`);
}

main().then(
  () => shutdown(0),
  async (e) => {
    console.error(`screenshot failed: ${e?.stack || e}`);
    await shutdown(1);
  },
);
