/**
 * The extension's `main` (dist/main.js): loads dist/client.js, the client bundle, with a V8 code
 * cache of its own (codeCache.ts) and hands VS Code its `activate` and `deactivate`. Nothing else
 * runs here; client/src/extension.ts is the client's entry point.
 */
import { join } from "node:path";
import type * as vscode from "vscode";
import { codeCacheDir, loadWithCodeCache } from "./codeCache";

type Client = typeof import("../extension");

const loaded = loadWithCodeCache(join(__dirname, "client.js"), codeCacheDir(process.env));
const client = loaded.exports as Client;

/**
 * The client's activate (client/src/extension.ts). On a start without a usable cache, the compiled
 * code is taken right after it (codeCache.ts `capture`: the functions activation ran, about half of
 * what 10 s later would hold, so a warm start deserializes only those) and written 10 s later.
 */
export function activate(context: vscode.ExtensionContext): ReturnType<Client["activate"]> {
  try {
    return client.activate(context);
  } finally {
    loaded.capture();
  }
}

/**
 * The client's deactivate (client/src/extension.ts). When the load found no usable code cache, the
 * loader writes one 10 s after the load; a window closed before that writes it here.
 */
export function deactivate(): Promise<void> {
  loaded.writeNow();
  return client.deactivate();
}
