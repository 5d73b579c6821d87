#!/usr/bin/env bash
# Jupyter from Debian for the notebook suites: nbconvert executes notebooks headless, nbclient and
# jupyter-client talk to the kernel. Idempotent: does nothing when they are already installed.
set -euo pipefail
if command -v jupyter-nbconvert >/dev/null 2>&1 && /usr/bin/python3 -c "import nbclient, jupyter_client" 2>/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends jupyter-nbconvert python3-nbclient jupyter-client >/dev/null
