// Settings a workspace must not set in Restricted Mode (issue 46 item 9): the size limit that keeps
// the language server from parsing huge files. VS Code ignores a workspace's value of a setting
// listed in capabilities.untrustedWorkspaces.restrictedConfigurations while the workspace is not
// trusted (the user's own value still applies), so a cloned repository cannot raise it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../support/helpers";

test("gpuPilot.maxFileSizeKB is ignored from an untrusted workspace (restrictedConfigurations)", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    capabilities: { untrustedWorkspaces: { supported: unknown; restrictedConfigurations: string[] } };
  };
  assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes("gpuPilot.maxFileSizeKB"));
  assert.notEqual(
    pkg.capabilities.untrustedWorkspaces.supported,
    true,
    "limited support: the restriction list applies",
  );
});
