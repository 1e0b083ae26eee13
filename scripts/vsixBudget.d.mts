/** Types of scripts/vsixBudget.mjs. The largest .vsix `npm run package` may build, in bytes (1.9 MiB). */
export const MAX_VSIX_BYTES: number;
