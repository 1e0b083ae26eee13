import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * The doc page of a rule: `docs/rules/GPUnnn.md`, shipped with the extension one folder above the
 * bundle (dist/), as a file URL that VS Code opens in an editor.
 */
export function docUrl(code: string): string {
  return pathToFileURL(resolve(__dirname, "..", "docs", "rules", `${code}.md`)).href;
}
