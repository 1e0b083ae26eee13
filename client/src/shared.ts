/**
 * The modules of dist/client.js that dist/features.js uses, by their path under client/src (or
 * server/src for ../../server/src/...), without the extension. dist/features.js does not bundle
 * them: esbuild.mjs turns its imports of these files into reads of this object (through
 * dist/client.js's exports), so each module and its state (the log channel, the selection...) exists
 * once. esbuild.mjs reads the list of files from the imports below, and fails the build when a file
 * lands in two bundles (add it here then).
 */
import * as agentsRegister from "./agents/register";
import * as agentsToolNames from "./agents/toolNames";
import * as config from "./config";
import * as gpuEnvironment from "./gpu/environment";
import * as gpuKernelSelection from "./gpu/kernelSelection";
import * as gpuSelection from "./gpu/selection";
import * as gpuStatusBar from "./gpu/statusBar";
import * as gpuUnits from "./gpu/units";
import * as gpuVendor from "./gpu/vendor";
import * as log from "./log";
import * as runWhich from "./run/which";
import * as shell from "./shell";
import * as views from "./views";
import * as commandIds from "../../server/src/commandIds";
import * as kernelSelectionFile from "../../server/src/kernel/selectionFile";

/** Module namespace by path (the key esbuild.mjs's virtual modules read). */
export const shared: Readonly<Record<string, unknown>> = {
  "client/src/agents/register": agentsRegister,
  "client/src/agents/toolNames": agentsToolNames,
  "client/src/config": config,
  "client/src/gpu/environment": gpuEnvironment,
  "client/src/gpu/kernelSelection": gpuKernelSelection,
  "client/src/gpu/selection": gpuSelection,
  "client/src/gpu/statusBar": gpuStatusBar,
  "client/src/gpu/units": gpuUnits,
  "client/src/gpu/vendor": gpuVendor,
  "client/src/log": log,
  "client/src/run/which": runWhich,
  "client/src/shell": shell,
  "client/src/views": views,
  "server/src/commandIds": commandIds,
  "server/src/kernel/selectionFile": kernelSelectionFile,
};
