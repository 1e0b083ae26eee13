/**
 * The entry of dist/execa.js (esbuild.mjs): execa alone, which the client's entry bundle requires
 * only when it starts its first process (common/src/gpu/nvidiaSmi.ts's loadExeca), not while `activate()` runs.
 */
// Only execa(file, args): the client parses no command strings (no execaCommand, see eslint.config.mjs).
export { execa } from "execa";
