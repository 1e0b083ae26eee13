/**
 * The modules of dist/client.js that dist/features.js uses, by their path from the repository root
 * (client/src/..., common/src/...), without the extension. dist/features.js does not bundle
 * them: esbuild.mjs turns its imports of these files into reads of this object (through
 * dist/client.js's exports), so each module and its state (the log channel, the selection...) exists
 * once. esbuild.mjs reads the list of files from the imports below, and fails the build when a file
 * lands in two bundles (add it here then).
 */
import * as agentsRegister from "./agents/register";
import * as agentsToolNames from "../../common/src/agents/toolNames";
import * as config from "./config";
import * as gpuEnvironment from "./gpu/environment";
import * as gpuSelection from "../../common/src/gpu/selection";
import * as gpuKernelSelection from "./gpu/kernelSelection";
import * as gpuStatusBar from "./gpu/statusBar";
import * as gpuUnits from "../../common/src/gpu/units";
import * as gpuVendor from "../../common/src/gpu/vendor";
import * as log from "./log";
import * as runWhich from "../../common/src/run/which";
import * as shell from "./shell";
import * as views from "./views";
import * as commandIds from "../../common/src/lsp/commandIds";
import * as kernelSelectionFile from "../../common/src/kernel/selectionFile";
import * as kernelCommandIds from "../../common/src/kernel/commandIds";
import * as fsWorkspaceFile from "../../common/src/fs/workspaceFile";

/** Module namespace by path (the key esbuild.mjs's virtual modules read). */
export const shared: Readonly<Record<string, unknown>> = {
  "client/src/agents/register": agentsRegister,
  "common/src/agents/toolNames": agentsToolNames,
  "client/src/config": config,
  "client/src/gpu/environment": gpuEnvironment,
  "common/src/gpu/selection": gpuSelection,
  "client/src/gpu/kernelSelection": gpuKernelSelection,
  "client/src/gpu/statusBar": gpuStatusBar,
  "common/src/gpu/units": gpuUnits,
  "common/src/gpu/vendor": gpuVendor,
  "client/src/log": log,
  "common/src/run/which": runWhich,
  "client/src/shell": shell,
  "client/src/views": views,
  "common/src/lsp/commandIds": commandIds,
  "common/src/kernel/selectionFile": kernelSelectionFile,
  "common/src/kernel/commandIds": kernelCommandIds,
  "common/src/fs/workspaceFile": fsWorkspaceFile,
};
