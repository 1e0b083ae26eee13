/** Types of scripts/recallCases.mjs (the recall benchmark's case loader). */
/** One expected finding of a case. */
export interface RecallExpect {
  file: string;
  rule: string;
  line: number;
  cell?: number;
}
/** A loaded case: its case.json fields, its slug and folder. */
export interface RecallCase {
  slug: string;
  dir: string;
  source: string;
  date: string;
  category: string;
  summary: string;
  covered: boolean;
  expect: RecallExpect[];
  wanted?: string;
  gpus?: number;
}
export const RECALL_CATEGORIES: readonly string[];
export function validateCase(dir: string, c: unknown): string[];
export function loadCases(casesDir: string): { cases: RecallCase[]; problems: string[] };
