/**
 * Command ids shared by the language server and the client, in a file that imports nothing: the
 * client (dist/client.js) takes them from here without bundling the LSP protocol library
 * (common/src/lsp/protocol.ts imports it), which belongs to the language-client bundle dist/lsp.js.
 */

/** The client command that opens a rule's documentation page; argument: the rule code ("GPU001"). */
export const SHOW_RULE_DOC_COMMAND = "gpuPilot.showRuleDoc";

/**
 * The code action kind of "apply every fix, the unsafe ones too" (command gpuPilot.applyUnsafeFixes).
 * Not under `source.fixAll`, so `editor.codeActionsOnSave` with `source.fixAll` never applies an
 * unsafe fix; the server offers it only when a request names this kind exactly.
 */
export const UNSAFE_FIXES_KIND = "source.gpuPilot.applyUnsafeFixes";
