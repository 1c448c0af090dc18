#!/usr/bin/env bash
# A Mnemo cluster on loopback (docs/scaling.md): a PostgreSQL primary and a streaming replica,
# Redis with a replica and 3 Sentinels, N Mnemo instances and a round-robin load balancer, all
# as real processes in one temporary folder on free high ports.
#
# Usage: scripts/cluster.sh start  [--dir <folder>] [--instances N] [--no-replica] [--no-sentinel]
#        scripts/cluster.sh status [--dir <folder>]
#        scripts/cluster.sh stop   [--dir <folder>]
# The folder defaults to $MNEMO_CLUSTER_DIR or <tmp>/mnemo-cluster; stop ends every process and
# removes it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node --import tsx scripts/cluster.ts "$@"
