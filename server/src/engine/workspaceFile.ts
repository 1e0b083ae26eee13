/**
 * The safe reader moved to common/src/fs/workspaceFile.ts (the claims ledger in common/
 * reads with it too); this module re-exports it so the engine's imports stay as they were.
 */
export * from "../../../common/src/fs/workspaceFile";
