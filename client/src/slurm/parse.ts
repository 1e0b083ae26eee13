/**
 * The Slurm output parsers (`sinfo -N -h -O ...`, `squeue --json`) live in server/src/slurm/parse.ts,
 * shared with the language server's partition hover, and are re-exported here for the Slurm view.
 */
export * from "../../../server/src/slurm/parse";
