/**
 * The repository's root folder. Tests build every path from it (never from their own `__dirname`:
 * test/unit/<root>/<folder>/ mirrors the source tree, so test files sit at different depths).
 * Kept apart from helpers.ts (which re-exports it) so that a test can have it without loading the engine.
 */
import { join } from "node:path";

export const ROOT = join(__dirname, "..", "..", "..");
