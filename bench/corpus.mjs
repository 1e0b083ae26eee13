// The benchmark corpus: the Python source of Debian's python3-torch package (code nobody here
// wrote), at the version pinned in test/corpus/debian-expected.json, fetched and unpacked by
// scripts/debian-corpus.mjs into .cache/debian/ (git-ignored).
import { readFileSync } from "node:fs";
import { ensurePackage, readCorpusFile, EXPECTED_FILE, pythonFiles } from "../scripts/debian-corpus.mjs";

export { pythonFiles };

/**
 * Makes sure the pinned python3-torch is unpacked; returns { tree, version, drift } (see
 * ensurePackage). @throws CorpusUnavailable with a clear message when apt cannot fetch it.
 */
export function ensureTorchTree() {
  return ensurePackage("python3-torch", readCorpusFile(EXPECTED_FILE).packages["python3-torch"]);
}

/** Files, lines and bytes of a file list. */
export function corpusSize(files) {
  let lines = 0,
    bytes = 0;
  for (const f of files) {
    const t = readFileSync(f, "utf8");
    bytes += Buffer.byteLength(t);
    for (let i = 0; i < t.length; i++) if (t.charCodeAt(i) === 10) lines++;
  }
  return { files: files.length, lines, bytes };
}
