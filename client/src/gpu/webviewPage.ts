/**
 * The HTML page of GPU Pilot's webviews (the dashboard and the history panel): one bundled script
 * and stylesheet from dist/, a strict Content-Security-Policy (nothing but the page's own files, the
 * script allowed by a fresh nonce; VS Code's webview guide), no CDN.
 */
import * as vscode from "vscode";

/**
 * The page for `webview`: the script and stylesheet files of `dist` (named in full, so that the
 * packaging test finds every bundle the client loads), `title`, and `body` (HTML, written by the
 * caller: no user text) before the script.
 */
export function webviewPage(
  webview: vscode.Webview,
  dist: vscode.Uri,
  files: { script: string; style: string },
  title: string,
  body: string,
): string {
  // Web Crypto (a global in Node.js 20): node:crypto is not required at the client's load (~6 ms).
  const nonce = Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, files.script));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, files.style));
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>${title}</title>
</head>
<body>
${body}
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
