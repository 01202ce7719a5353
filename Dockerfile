# The agent-fix app: webhook server and worker in one image (`npm start` runs both; set
# AGENT_FIX_ROLE=server or worker to run one). Built on a Debian trixie base made without an image
# registry (sandbox/image/bootstrap-base.sh; Debian trixie packages Node 20), by deploy/build-image.sh:
#
#   bash deploy/build-image.sh            # agent-fix-base:trixie when absent, then agent-fix:VERSION
#   docker run -d --name agent-fix -p 3000:3000 --env-file .env \
#     -v /var/run/docker.sock:/var/run/docker.sock --group-add "$(stat -c %g /var/run/docker.sock)" \
#     agent-fix:0.1.0
#
# The worker (roles `all` and `worker`) starts sandboxes through the host's Docker engine: it needs the
# socket mounted and its group added, and the sandbox image built on that host (npm run sandbox:image).
# Whoever holds the socket is root on the host: run nothing else in this container.
# docs/operating.md is the operator's guide (compose, scaling out, sizing, upgrades, proxies, GHES).
ARG BASE=agent-fix-base:trixie

# The runtime's packages, installed once: both the build stage and the app's image start from here
# (one apt run; apt was most of the cold build time). git: clone and push happen on the host side (the
# app's container), never in a sandbox.
FROM ${BASE} AS runtime
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
  && apt-get install -y --no-install-recommends nodejs git ca-certificates tini \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
  && groupadd -g 1000 node \
  && useradd -m -u 1000 -g 1000 -s /usr/sbin/nologin node

FROM runtime AS deps
# Certificate authorities the build must trust beside Debian's, as PEM text: behind a TLS-inspecting
# proxy, its CA (deploy/build-image.sh passes the host's /usr/local/share/ca-certificates). This stage
# only: the app's image does not carry them.
ARG EXTRA_CA_CERTS=""
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
      printf '%s\n' "$EXTRA_CA_CERTS" >/usr/local/share/ca-certificates/build-extra.crt && update-ca-certificates; \
    fi
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
# npm from its own registry tarball, pinned and checked against the registry's sha512 integrity:
# Debian's `npm` package pulls in ~250 node-* packages (14 of the 23 min a cold build took).
ARG NPM_VERSION=10.9.4
ARG NPM_INTEGRITY=sha512-OnUG836FwboQIbqtefDNlyR0gTHzIfwRfE3DuiNewBvnMnWEpB0VEXwBlFVgqpNzIgYo/MHh3d2Hel/pszapAA==
RUN node -e ' \
      const [version, integrity] = process.argv.slice(1); \
      const url = `https://registry.npmjs.org/npm/-/npm-${version}.tgz`; \
      fetch(url).then(async (r) => { \
        if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`); \
        const body = Buffer.from(await r.arrayBuffer()); \
        const got = "sha512-" + require("node:crypto").createHash("sha512").update(body).digest("base64"); \
        if (got !== integrity) throw new Error(`${url}: integrity ${got}, expected ${integrity}`); \
        require("node:fs").writeFileSync("/tmp/npm.tgz", body); \
      }).catch((e) => { console.error(e); process.exit(1); });' "$NPM_VERSION" "$NPM_INTEGRITY" \
  && mkdir -p /opt/npm && tar -xzf /tmp/npm.tgz -C /opt/npm --strip-components=1 && rm /tmp/npm.tgz \
  && ln -s /opt/npm/bin/npm-cli.js /usr/local/bin/npm
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; tsx (a dependency) runs the TypeScript sources directly.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM runtime
# No npm here: the running app needs only node.
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json app.yml ./
COPY config ./config
COPY deploy/healthcheck.mjs ./deploy/healthcheck.mjs
COPY src ./src
COPY worker ./worker
COPY sandbox ./sandbox
# The worker writes trajectories here (AGENT_FIX_TRAJECTORY_DIR, relative to /app) and must own it:
# the app runs as `node`, and /app is root's.
RUN mkdir -p /app/trajectories && chown node:node /app/trajectories
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    AGENT_FIX_WORKER_PORT=3001 \
    AGENT_FIX_METRICS_PORT=3002 \
    TMPDIR=/tmp
USER node
# 3000: webhooks and /healthz of the server (what a proxy forwards; never /metrics). 3002: the
# server's /metrics (AGENT_FIX_METRICS_HOST), 3001: the worker's /healthz and /metrics
# (AGENT_FIX_WORKER_HOST); both 127.0.0.1 by default: set 0.0.0.0 and AGENT_FIX_METRICS_TOKEN to scrape
# them from elsewhere (a listener off loopback without the token refuses to start).
EXPOSE 3000 3001 3002
# Asks the /healthz of each part the role runs (deploy/healthcheck.mjs): the server's on PORT, the
# worker's on AGENT_FIX_WORKER_PORT (Docker engine, sandbox image, Redis).
# Generous timeouts: a worker host busy with sandboxes' test runs is slow, not ill (measured on a loaded
# 2-core host: 13 s to start node in the container, 4.6 s for the answer).
HEALTHCHECK --interval=30s --timeout=30s --start-period=60s --retries=3 CMD ["node", "deploy/healthcheck.mjs"]
# tini forwards SIGTERM so the worker can finish its runs or hand them back to the queue (rolling deploys).
ENTRYPOINT ["tini", "--"]
CMD ["node", "--import", "tsx", "src/main.ts"]
# Last, so that a new version reuses the layers above from the build cache.
ARG VERSION=dev
LABEL org.opencontainers.image.title="agent-fix" org.opencontainers.image.version="${VERSION}"
