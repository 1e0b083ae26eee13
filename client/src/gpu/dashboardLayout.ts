/**
 * How the GPU dashboard lays out its GPUs (issue 45 item 1): a card each, or nvitop's density of one
 * or two lines each, chosen by the GPU count and the pane's height. Pure and import-free: the
 * webview (client/webview/dashboard.ts) calls it with its own height.
 */

/** How the dashboard lays out its GPUs: a card each (`full`) or two lines each with the full card on demand (`compact`). */
export type DashboardLayout = "full" | "compact";

/** GPUs from which the dashboard is compact whatever the height (nvitop's density from 5 GPUs up). */
export const COMPACT_FROM_GPUS = 5;

/** The height of a full card with a process, CSS px (measured at the 300 px side bar: an H200 card with one process is about 200 px). */
export const FULL_CARD_PX = 200;

/**
 * The layout for `gpuCount` GPUs in a pane `heightPx` tall (CSS px): compact from
 * {@link COMPACT_FROM_GPUS} GPUs, or when the full cards ({@link FULL_CARD_PX} each) would not fit
 * the height; full otherwise, and while the height is unknown (0).
 */
export function chooseLayout(gpuCount: number, heightPx: number): DashboardLayout {
  if (gpuCount >= COMPACT_FROM_GPUS) return "compact";
  if (heightPx > 0 && gpuCount * FULL_CARD_PX > heightPx) return "compact";
  return "full";
}
