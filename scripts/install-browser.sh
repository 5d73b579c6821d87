#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (test/browser, `npm run test:browser`).
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root (or sudo) and apt.
# Browsers are never downloaded any other way (playwright-core ships no browser of its own).
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium: already installed ($(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "chromium: not installed and not root (no sudo); the browser tests will be skipped" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version || true
