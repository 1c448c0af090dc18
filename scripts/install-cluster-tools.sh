#!/usr/bin/env bash
# The cluster suite's load balancer (HAProxy) and the PgBouncer check, from Debian's packages.
# Without HAProxy the cluster falls back to a small Node proxy; Sentinels run as
# `redis-server --sentinel`, so Redis itself is all they need.
set -euo pipefail
missing=()
command -v haproxy >/dev/null || missing+=(haproxy)
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "haproxy: $(haproxy -v | head -n 1)"
echo "pgbouncer: $(pgbouncer --version | head -n 1)"
