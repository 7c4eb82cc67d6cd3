#!/usr/bin/env bash
# Set-up and demo in one command: installs pnpm 12.4.2 if needed and the workspace's
# dependencies (better-sqlite3 builds from source, ~2 min the first time), then runs the
# crash-recovery demo on the embedded SQLite default.
set -euo pipefail
cd "$(dirname "$0")/.."
# pnpm 12 ignores nodedir from ~/.npmrc; node-gyp needs it to build better-sqlite3 offline.
export npm_config_nodedir="${npm_config_nodedir:-$(npm config get nodedir)}"
if [ "$(pnpm --version 2>/dev/null)" != "12.4.2" ]; then
  echo "installing pnpm 12.4.2"
  npm i -g pnpm@12.4.2
fi
pnpm install --frozen-lockfile
pnpm demo
