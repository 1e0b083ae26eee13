// Types of scripts/debian-corpus.mjs, for the TypeScript tests that import it.
export const ROOT: string;
export const EXPECTED_FILE: string;
export const KNOWN_FALSE_FILE: string;
export const CACHE_DIR: string;
export const EXIT_SKIPPED: number;
export class CorpusUnavailable extends Error {}
export interface CorpusEntry {
  package: string;
  version: string;
  file: string;
  line: number;
  column: number;
  code: string;
  severity: string;
  verdict: string;
  reason: string;
  repro?: string;
}
export interface CorpusFile {
  about?: string;
  suite: string;
  packages: Record<string, string>;
  findings: CorpusEntry[];
}
export interface Finding {
  file: string;
  line: number;
  column: number;
  code: string;
  severity: string;
  message: string;
}
export interface PackageTree {
  tree: string;
  version: string;
  drift: string | null;
}
export interface CorpusRun extends PackageTree {
  pkg: string;
  pinned: string;
  findings: Finding[];
  pythonFiles: number;
}
export function readCorpusFile(file: string): CorpusFile;
export function ensurePackage(pkg: string, version: string): Promise<PackageTree>;
export function ensureCorpus(): Promise<Array<PackageTree & { pkg: string; pinned: string }>>;
export function lintTrees(trees: string[]): Promise<{ byTree: Map<string, Finding[]>; files: number }>;
export function pythonFiles(dir: string): string[];
export function compare(
  expected: CorpusFile,
  knownFalse: CorpusFile,
  runs: Array<Pick<CorpusRun, "pkg" | "pinned" | "version" | "drift" | "findings" | "pythonFiles">>,
): { failures: string[]; notes: string[]; knownFalse: number };
export function runCorpus(): Promise<{ runs: CorpusRun[]; files: number }>;
export function checkCorpus(): Promise<{ status: "passed" | "failed" | "skipped"; text: string }>;
