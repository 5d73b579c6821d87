#!/usr/bin/env bash
# Installs Debian's PostgreSQL server (package `postgresql`) for the PostgreSQL store's suites
# (test/service/pg-*.test.ts), which start their own throw-away cluster with initdb and pg_ctl
# (test/pg-server.ts). Nothing is started here and the distribution's own cluster is not used.
# Idempotent; uses sudo when not root.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "PostgreSQL server already installed: $(ls -d /usr/lib/postgresql/*/bin | tail -1)"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# The package's post-install may create and start a default cluster; stop it, the suites use their own.
$SUDO apt-get install -y --no-install-recommends postgresql
if command -v pg_lsclusters >/dev/null 2>&1; then
  pg_lsclusters --no-header 2>/dev/null | while read -r version name _; do
    $SUDO pg_ctlcluster "$version" "$name" stop 2>/dev/null || true
  done
fi
ls -d /usr/lib/postgresql/*/bin/initdb
