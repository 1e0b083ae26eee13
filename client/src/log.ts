/**
 * The one logger: a LogOutputChannel named "GPU Pilot" (Output view; level set by the user with
 * "Developer: Set Log Level..."). Created on first use.
 */
import * as vscode from "vscode";

let channel: vscode.LogOutputChannel | undefined;

/** The "GPU Pilot" LogOutputChannel, created on first use. */
export function logChannel(): vscode.LogOutputChannel {
  channel ??= vscode.window.createOutputChannel("GPU Pilot", { log: true });
  return channel;
}

/** Shorthands for {@link logChannel}'s levels. Objects and errors passed after the message are formatted by VS Code. */
export const log = {
  trace: (message: string, ...args: unknown[]) => logChannel().trace(message, ...args),
  debug: (message: string, ...args: unknown[]) => logChannel().debug(message, ...args),
  info: (message: string, ...args: unknown[]) => logChannel().info(message, ...args),
  warn: (message: string, ...args: unknown[]) => logChannel().warn(message, ...args),
  error: (message: string | Error, ...args: unknown[]) => logChannel().error(message, ...args),
  show: () => logChannel().show(true),
};

let trace: vscode.LogOutputChannel | undefined;

/**
 * The "GPU Pilot LSP Trace" channel for `gpuPilot.trace.server`, created on first use (only when
 * tracing is switched on). vscode-languageclient 11 traces only while this channel's log level is
 * Trace ("Developer: Set Log Level...").
 */
export function traceChannel(): vscode.LogOutputChannel {
  trace ??= vscode.window.createOutputChannel("GPU Pilot LSP Trace", { log: true });
  return trace;
}

/** Disposes the channels (on deactivate); a later use creates new ones. */
export function disposeLog(): void {
  channel?.dispose();
  channel = undefined;
  trace?.dispose();
  trace = undefined;
}
