/** Types of scripts/screenshotLog.mjs (what the screenshot script's log lines say about each shot). */
export function fakeGpuCount(mode: string): number;
export function gpuList(indices: readonly number[]): string;
export function sidebarLine(width: number, shots: readonly string[], inShot: boolean): string;
export function treeShotLine(file: string, labels: readonly string[], gpus: number | null): string;
