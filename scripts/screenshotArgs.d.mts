/** Types of scripts/screenshotArgs.mjs (the screenshot script's options). */
export interface ScreenshotArgs {
  help: boolean;
  "out-dir": string;
  file: string;
  width: string;
  height: string;
  "history-height": string;
  scale: string;
  only: string;
  "sidebar-width": string;
  "dashboard-height": string;
  suffix: string;
}
export function screenshotOptions(
  outDirDefault: string,
): Record<string, { type: "string" | "boolean"; short?: string; default: string | boolean }>;
export function parseScreenshotArgs(argv: readonly string[], outDirDefault: string): ScreenshotArgs;
