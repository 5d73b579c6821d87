#!/usr/bin/env bash
# Deno, for the suite that runs the walkthroughs under Deno's own Jupyter kernel
# (test/notebooks/deno.test.ts), from the npm package `deno` into .tools/deno. It is not a
# dependency of rbp-notebook: the registry this project builds against publishes only deno's
# linux-x64 platform package, so a lockfile naming deno could not serve `npm ci` on every platform.
# RBP_DENO=/path/to/deno uses another binary instead.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.9.6
bin=.tools/deno/node_modules/deno/deno
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^deno $version"; then
  exit 0
fi
mkdir -p .tools/deno
npm install --prefix .tools/deno --no-save --no-package-lock --no-audit --no-fund "deno@$version"
"$bin" --version | head -n 1
