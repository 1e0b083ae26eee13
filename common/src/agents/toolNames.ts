/**
 * The agent tools' names (package.json `contributes.languageModelTools`), in a file that imports
 * nothing: client/src/agents/register.ts registers the tools by these names, core.ts and
 * client/src/agents/lmTools.ts implement them.
 */
export const TOOL = {
  listGpus: "gpu-pilot_listGpus",
  pickGpus: "gpu-pilot_pickGpus",
  checkFile: "gpu-pilot_checkFile",
  runOnGpus: "gpu-pilot_runOnGpus",
} as const;
export type ToolName = (typeof TOOL)[keyof typeof TOOL];
