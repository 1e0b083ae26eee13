// The log lines of scripts/screenshot.mjs that say what a shot shows, kept apart (and pure) so that
// a unit test reads them (test/unit/repo/screenshotLog.test.ts). A fresh user's 8-GPU run logged
// "tree rows: [GPU 0 .. GPU 3]" before any shot, with the dashboard's pane beside the tree (the tree
// renders only the rows in view), and "side bar: 220 px wide" between the side bar shots and the
// editor shots, which leave the side bar out: both read as if they described the tree shot.

/** The GPUs of the stand-in nvidia-smi's mode (test/fixtures/bin/nvidia-smi): x16, x8, else the recorded 2. */
export function fakeGpuCount(mode) {
  return /\bx16\b/.test(mode) ? 16 : /\bx8\b/.test(mode) ? 8 : 2;
}

/** `GPU 0-3`, `GPU 0, 2, 5`, `GPU 4`: GPU indices, runs of consecutive ones joined. */
export function gpuList(indices) {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i + 1 ? `${sorted[i]}-${sorted[j]}` : j === i + 1 ? `${sorted[i]}, ${sorted[j]}` : `${sorted[i]}`);
    i = j + 1;
  }
  return `GPU ${parts.join(", ")}`;
}

/**
 * The side bar's width and what it is for: `side bar: 300 px wide (the tree, dashboard and Slurm
 * shots)`. `shots` names the shots taken at this width (those of --only); `inShot` whether they show
 * the side bar, or only give the editor the room (the editor shots crop the side bar out).
 */
export function sidebarLine(width, shots, inShot) {
  const one = shots.length === 1;
  const names = shots.length ? `the ${shots.join(", ")} shot${one ? "" : "s"}` : "no shot";
  return inShot
    ? `side bar: ${width} px wide (${names}: ${one ? "it shows" : "they show"} it)`
    : `side bar: ${width} px wide (narrowed for ${names}: ${one ? "it leaves" : "they leave"} it out)`;
}

/**
 * What the GPUs tree shot (`file`) shows: its rows in view when it was taken (the tree is a virtual
 * list: rows below the pane's fold are not rendered, and not in the shot), the GPUs among them, and,
 * when `gpus` (the machine's count; null when unknown) is more, the GPUs that are left out.
 */
export function treeShotLine(file, labels, gpus) {
  const shown = labels
    .map((l) => /^GPU (\d+)$/.exec(l.trim()))
    .filter(Boolean)
    .map((m) => Number(m[1]));
  const missing = gpus === null ? [] : [...Array(gpus).keys()].filter((i) => !shown.includes(i));
  let what = shown.length ? gpuList(shown) : "no GPU row";
  if (gpus !== null) what += ` of ${gpus}`;
  if (shown.length && gpus !== null && !missing.length) what += " (every GPU)";
  if (shown.length && missing.length) what += `; ${gpuList(missing)} below the pane's fold, not in the shot`;
  const rows = `${labels.length} row${labels.length === 1 ? "" : "s"}`;
  return `tree shot ${file}: ${rows} in view, ${what}: ${JSON.stringify(labels)}`;
}
