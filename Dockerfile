# syntax=docker/dockerfile:1
# The Mnemo server (docs/deploy.md). Build: the whole workspace, then `pnpm deploy --prod` keeps
# the server with its production dependencies, the built console and the word-vector table.
# Run: plain Node as a non-root user, data in the /data volume (embedded PGlite when no
# DATABASE_URL is given), listening on all interfaces.
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm-slim AS build
ENV CI=true
WORKDIR /src
# The lockfile alone fetches every package: this layer is reused until dependencies change.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
# The pnpm the repository pins (package.json's packageManager).
RUN npm install -g "pnpm@$(node -p "require('./package.json').packageManager.split('@')[1]")"
COPY patches ./patches
RUN --mount=type=cache,id=pnpm-store,target=/root/.local/share/pnpm/store pnpm fetch
COPY . .
RUN --mount=type=cache,id=pnpm-store,target=/root/.local/share/pnpm/store \
    pnpm install --frozen-lockfile --offline
RUN pnpm build
RUN --mount=type=cache,id=pnpm-store,target=/root/.local/share/pnpm/store \
    pnpm --filter @mnemo/server --prod deploy --legacy /app

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8787 \
    MNEMO_DATA_DIR=/data \
    LOG_FORMAT=json
WORKDIR /app
# The code stays owned by root (read-only to the server); only /data is the server's.
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
