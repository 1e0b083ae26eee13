// The folder `npm start` opens (scripts/start.mjs).
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Returns the absolute path of the workspace `npm start` opens. With `folder` (the `--folder`
 * option, relative to the current directory) that folder itself. Without it, a fresh copy of
 * `<repoRoot>/examples` at `<runDir>/examples`: an older copy is deleted first, so every start
 * begins from the tracked files, and quick fixes tried in the editor change only the copy (the
 * repository's `git status` stays clean; `runDir` is under the git-ignored .e2e-run/).
 * Throws (from node:fs) when examples/ cannot be read or the copy cannot be written.
 * @param {{ repoRoot: string, runDir: string, folder?: string }} opts
 * @returns {string}
 */
export function startWorkspace({ repoRoot, runDir, folder }) {
  if (folder) return path.resolve(folder);
  const copy = path.join(runDir, "examples");
  fs.rmSync(copy, { recursive: true, force: true });
  fs.mkdirSync(runDir, { recursive: true });
  fs.cpSync(path.join(repoRoot, "examples"), copy, { recursive: true });
  return copy;
}
