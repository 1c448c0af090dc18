#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against
# a Mnemo server this script starts itself: embedded PGlite in a temporary data folder, a known
# bootstrap API key, a free port. The server is stopped and the folder removed on exit.
#
# Auth: the suite connects with a bare URL and has no option to send headers, while every MCP
# request to Mnemo needs an API key. Rather than weaken the server (no auth switch, no key in the
# URL), a small local proxy in front of it adds `Authorization: Bearer <key>` to each request,
# exactly as a configured MCP client would, and streams everything else through unchanged.
#
# Expected results: scenarios that apply to any server pass; the others are listed, each with
# its reason, in scripts/mcp-conformance-baseline.yml. The suite exits non-zero when a scenario
# outside the baseline fails AND when a baselined scenario passes (a stale entry to remove), so
# the baseline stays exact. The suite needs Node 22; npx fetches it, whatever node runs the server.
#
# Usage: bash scripts/mcp-conformance.sh [--scenario <name>]   (extra options go to the suite)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

CONFORMANCE_VERSION="0.1.16"
baseline="$root/scripts/mcp-conformance-baseline.yml"
work="$(mktemp -d)"
server_pid=""
proxy_pid=""

cleanup() {
  local status=$?
  for pid in "$proxy_pid" "$server_pid"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  if [[ $status -ne 0 && -f "$work/server.log" ]]; then
    echo "--- server log (last 40 lines) ---" >&2
    tail -n 40 "$work/server.log" >&2 || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  node -e "const s = require('net').createServer(); s.listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });"
}

server_port="$(free_port)"
proxy_port="$(free_port)"
api_key="mnemo_conformance_$(node -e "console.log(require('crypto').randomBytes(12).toString('hex'))")"

echo "starting mnemo on 127.0.0.1:${server_port} (PGlite in ${work}/data)"
# One node process (tsx as a loader), so that the PID below is the server itself.
# The request limits are raised: the whole suite comes from one address and one key, faster than
# the default rates.
(
  cd server
  exec env -u DATABASE_URL \
    HOST=127.0.0.1 PORT="$server_port" MNEMO_DATA_DIR="$work/data" \
    MNEMO_BOOTSTRAP_API_KEY="$api_key" MNEMO_MCP_RATE_LIMIT_PER_MINUTE=100000 MNEMO_KEY_RATE_LIMIT_PER_MINUTE=100000 \
    MNEMO_WORKSPACE_RATE_LIMIT_PER_MINUTE=100000 MNEMO_INFLIGHT_PER_WORKSPACE=1000 LOG_LEVEL=warn \
    node --conditions=mnemo-source --import tsx src/main.ts
) >"$work/server.log" 2>&1 &
server_pid=$!

node --input-type=module -e "
import http from 'node:http';
const [listenPort, upstreamPort, key] = process.argv.slice(1);
http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: 'Bearer ' + key };
  const upstream = http.request({ host: '127.0.0.1', port: Number(upstreamPort), method: req.method, path: req.url, headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}).listen(Number(listenPort), '127.0.0.1');
" "$proxy_port" "$server_port" "$api_key" >"$work/proxy.log" 2>&1 &
proxy_pid=$!

# Ready when /ready says so (migrations ran, the bootstrap key is registered).
for attempt in $(seq 1 120); do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "the server exited during start-up" >&2
    exit 1
  fi
  if node -e "fetch('http://127.0.0.1:${server_port}/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then
    break
  fi
  if [[ $attempt -eq 120 ]]; then
    echo "the server was not ready after 60 s" >&2
    exit 1
  fi
  sleep 0.5
done
echo "mnemo ready after ${SECONDS}s; running @modelcontextprotocol/conformance@${CONFORMANCE_VERSION}"

npx -y -p node@22 -p "@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}" \
  conformance server \
  --url "http://127.0.0.1:${proxy_port}/mcp" \
  --suite all \
  --expected-failures "$baseline" \
  --output-dir "$work/results" \
  "$@"
echo "conformance: every scenario matched the baseline (${SECONDS}s)"
