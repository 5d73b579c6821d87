#!/usr/bin/env bash
# Jupyter from Debian for the notebook suites: nbconvert executes notebooks headless, nbclient and
# jupyter-client talk to the kernel, and the classic Notebook 6.4 (jupyter-notebook) is driven in
# Chromium by test/browser/notebook.test.ts (page reload, untrusted notebook), Jupyter's own
# kernel test suite (python3-jupyter-kernel-test) runs against the rbp kernel in
# test/kernel/jupyter-kernel-test.test.ts, and numpy is the peer of `npm run bench:notebook`
# (bench/numpy_grid.py). Idempotent: does
# nothing when they are already installed. (Deno's kernel comes from npm: the deno devDependency.)
set -euo pipefail
if command -v jupyter-nbconvert >/dev/null 2>&1 && command -v jupyter-notebook >/dev/null 2>&1 && /usr/bin/python3 -c "import nbclient, jupyter_client, jupyter_kernel_test, numpy" 2>/dev/null; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "jupyter: not installed and not root (no sudo); the notebook suites will be skipped" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends jupyter-nbconvert python3-nbclient jupyter-client jupyter-notebook python3-jupyter-kernel-test python3-numpy >/dev/null
