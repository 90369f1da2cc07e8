# syntax=docker/dockerfile:1
# One image for the Cairn services (memory-core, summarizer): the workspace's production dependencies and its
# TypeScript sources, run by tsx (a production dependency) as an unprivileged user.
#   docker build -t cairn:0.1.0 .
# Chroma is not in it: compose runs the official chromadb/chroma image beside it.

ARG NODE_IMAGE=node:24.22.3-bookworm-slim

# Every workspace's package.json at its place, and nothing else, so the dependency layer below is rebuilt only
# when a manifest or the lock file changes.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && find . -name package.json -not -path "*/node_modules/*" -exec cp --parents {} /manifests/ \; \
 && cp package-lock.json /manifests/

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=manifests /manifests/ ./
# Production dependencies only, exactly as locked. The image always talks to an external Chroma
# (CAIRN_CHROMA_URL), so the chromadb package's native server binding (~400 MB, used only by the embedded
# default of `npm start`) is left out; the chromadb client does not load it.
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/chromadb-js-bindings-* \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_CACHE=/tmp/.npm \
    CAIRN_HOST=0.0.0.0 \
    CAIRN_PORT=8790 \
    CAIRN_DATA_DIR=/var/lib/cairn
RUN groupadd --system --gid 10001 cairn \
 && useradd --system --uid 10001 --gid cairn --home-dir /var/lib/cairn --shell /usr/sbin/nologin cairn \
 && mkdir -p /var/lib/cairn/lexical \
 && chown -R cairn:cairn /var/lib/cairn
WORKDIR /app
# Owned by root and read-only to the service user: the code cannot be changed by the process that runs it.
COPY --from=deps /app/ ./
COPY . .
USER cairn:cairn
EXPOSE 8790
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=4 \
  CMD ["node", "deploy/healthcheck.mjs", "http", "http://127.0.0.1:8790/readyz"]
CMD ["node", "--import", "tsx", "services/server/src/main.ts"]
