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

FROM ${BASE} AS deps
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
  && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
  && rm -rf /var/lib/apt/lists/*
# Certificate authorities npm must trust beside Debian's, as PEM text: behind a TLS-inspecting proxy,
# its CA (deploy/build-image.sh passes the host's /usr/local/share/ca-certificates). This stage only:
# the app's image does not carry them.
ARG EXTRA_CA_CERTS=""
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
      printf '%s\n' "$EXTRA_CA_CERTS" >/usr/local/share/ca-certificates/build-extra.crt && update-ca-certificates; \
    fi
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; tsx (a dependency) runs the TypeScript sources directly.
RUN NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force

FROM ${BASE}
ENV DEBIAN_FRONTEND=noninteractive
# git: clone and push happen on the host side (the app's container), never in a sandbox. No npm here:
# the running app needs only node.
RUN apt-get update \
  && apt-get install -y --no-install-recommends nodejs git ca-certificates tini \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
  && groupadd -g 1000 node \
  && useradd -m -u 1000 -g 1000 -s /usr/sbin/nologin node
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
    TMPDIR=/tmp
USER node
# 3000: webhooks, /healthz, /metrics of the server. 3001: the worker's /healthz and /metrics
# (AGENT_FIX_WORKER_HOST, 127.0.0.1 by default: set 0.0.0.0 and AGENT_FIX_METRICS_TOKEN to scrape it).
EXPOSE 3000 3001
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
