#!/usr/bin/env bash
# Installs pgvector into the machine's PostgreSQL 15 when it is missing.
# Debian bookworm ships no pgvector for PostgreSQL 15, so we build Debian's own source
# package (trixie, pgvector 0.8.0) against postgresql-server-dev-15. Idempotent: a machine
# that already has the extension returns at once.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if [ -x "$PG_CONFIG" ] && [ -f "$("$PG_CONFIG" --sharedir)/extension/vector.control" ]; then
  echo "pgvector: already installed for PostgreSQL ${PG_MAJOR}"
  exit 0
fi

SRC_LIST=/etc/apt/sources.list.d/mnemo-trixie-src.sources
if [ ! -f "$SRC_LIST" ]; then
  $SUDO tee "$SRC_LIST" >/dev/null <<'SOURCES'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "postgresql-server-dev-${PG_MAJOR}" dpkg-dev make gcc >/dev/null

workdir="$(mktemp -d)"
trap 'rm -rf "$workdir"' EXIT
cd "$workdir"
apt-get source -qq pgvector >/dev/null
cd "$(find . -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)"
make -s PG_CONFIG="$PG_CONFIG" OPTFLAGS="" >/dev/null
$SUDO make -s PG_CONFIG="$PG_CONFIG" install >/dev/null
echo "pgvector: built and installed $(grep default_version vector.control | tr -d "'") for PostgreSQL ${PG_MAJOR}"
