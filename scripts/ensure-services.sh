#!/usr/bin/env bash
# Makes sure the services the test suite talks to are up on loopback: PostgreSQL (the machine's
# cluster) and Redis. Starts whichever is down; waits until each answers.
set -euo pipefail

wait_for() {
  local name="$1"; shift
  for _ in $(seq 1 30); do
    if "$@" >/dev/null 2>&1; then echo "$name: up"; return 0; fi
    sleep 1
  done
  echo "$name: did not come up" >&2
  return 1
}

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  echo "PostgreSQL: starting"
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n 1)" main start
  else
    echo "PostgreSQL is not running and pg_ctlcluster is missing" >&2
    exit 1
  fi
fi
wait_for PostgreSQL pg_isready -h 127.0.0.1 -p 5432 -q

if ! redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
  echo "Redis: starting"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
fi
wait_for Redis sh -c 'redis-cli -h 127.0.0.1 -p 6379 ping | grep -q PONG'
