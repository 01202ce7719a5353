# The agent-fix app: webhook server and worker in one image (`npm start` runs both; set
# AGENT_FIX_ROLE=server or worker to run one). The worker starts sandboxes through the host's Docker
# engine, so it needs the socket and the sandbox image built on that host (npm run sandbox:image):
#
#   docker build -t agent-fix .
#   docker run -d --name agent-fix -p 3000:3000 --env-file .env \
#     -v /var/run/docker.sock:/var/run/docker.sock --group-add "$(stat -c %g /var/run/docker.sock)" \
#     agent-fix
#
# Node 22 here (the host tooling targets Node 20.20; both are supported by engines >=20.18.1).
# Behind a firewall with no registry, build FROM an imported base instead (see sandbox/image/).
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; tsx (a dependency) runs the TypeScript sources directly.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE}
# git: clone and push happen on the host side (the app's container), never in a sandbox.
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json app.yml ./
COPY config ./config
COPY src ./src
COPY worker ./worker
COPY sandbox ./sandbox
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    TMPDIR=/tmp
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini forwards SIGTERM so the worker can finish its runs or hand them back to the queue (rolling deploys).
ENTRYPOINT ["tini", "--"]
CMD ["node", "--import", "tsx", "src/main.ts"]
