/**
 * The entry of dist/execa.js (esbuild.mjs): execa alone, which the client's entry bundle requires
 * only when it starts its first process (gpu/nvidiaSmi.ts's loadExeca), not while `activate()` runs.
 */
export * from "execa";
