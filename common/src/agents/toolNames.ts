/**
 * The agent tools' names (package.json `contributes.languageModelTools`), in a file that imports
 * nothing: the entry bundle (dist/client.js) registers the tools at activation by these names
 * (client/src/agents/register.ts) while their code (core.ts, client/src/agents/lmTools.ts) is in dist/features.js.
 */
export const TOOL = {
  listGpus: "gpu-pilot_listGpus",
  pickGpus: "gpu-pilot_pickGpus",
  checkFile: "gpu-pilot_checkFile",
  runOnGpus: "gpu-pilot_runOnGpus",
} as const;
export type ToolName = (typeof TOOL)[keyof typeof TOOL];

/** The tools that have a `prepareInvocation` (VS Code's confirmation before a run). */
export const PREPARED_TOOLS: readonly ToolName[] = [TOOL.runOnGpus];
