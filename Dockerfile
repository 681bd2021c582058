# syntax=docker/dockerfile:1
#
# The service's two images, from one build of this checkout (docs/operations.md#images):
#
#   docker build --target api    -t amy-api .      # the API; also runs the migrations (`prisma migrate deploy`)
#   docker build --target worker -t amy-worker .   # the worker, with the Python gates and the sandbox
#
# Both run the compiled service (`npm run build`) with plain node, as the unprivileged user `amy`
# (uid 10001), under tini. Neither holds a secret: the master key, the database passwords and the codec
# operators' tokens come from the environment or mounted files at run time (deploy/compose.yaml).
# The worker's sandbox needs user namespaces in its container; see the security options in
# deploy/compose.yaml.

ARG NODE_VERSION=22
ARG DEBIAN_RELEASE=bookworm

# ---------------------------------------------------------------------------------------------------
# build: every dependency, then the service compiled to dist/ (with the workflow bundle) and the SDK's
# browser bundle that the console loads. Scripts are skipped at install: the install hook also makes
# the development .venv and the Prisma client, which no image uses; the one patch is applied by hand.
FROM node:${NODE_VERSION}-${DEBIAN_RELEASE}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/
COPY cli/package.json cli/
COPY patches patches
RUN npm ci --ignore-scripts --no-audit --no-fund && npx patch-package
COPY . .
RUN npm run build --workspace @amy/sdk && npm run build

# ---------------------------------------------------------------------------------------------------
# deps: the production dependencies alone (no TypeScript, jest, esbuild or embedded Postgres).
FROM node:${NODE_VERSION}-${DEBIAN_RELEASE}-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY sdk/package.json sdk/
COPY cli/package.json cli/
COPY patches patches
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npx patch-package && npm cache clean --force

# ---------------------------------------------------------------------------------------------------
# runtime: what both images share. tini is PID 1: it hands SIGTERM to node and reaps the processes a
# worker's children leave behind. The code belongs to root and is read-only to `amy`.
FROM node:${NODE_VERSION}-${DEBIAN_RELEASE}-slim AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && groupadd --system --gid 10001 amy \
  && useradd --system --uid 10001 --gid amy --no-create-home --shell /usr/sbin/nologin amy
WORKDIR /app
ENV NODE_ENV=production
COPY package.json ./
COPY --from=deps /app/node_modules node_modules
COPY --from=build /src/dist dist
ENTRYPOINT ["/usr/bin/tini", "--"]

# ---------------------------------------------------------------------------------------------------
# api: the HTTP API, the console it serves (with the SDK bundle), and the migrations.
FROM runtime AS api
COPY console console
COPY --from=build /src/sdk/package.json sdk/package.json
COPY --from=build /src/sdk/dist sdk/dist
COPY prisma prisma
COPY prisma.config.ts ./
USER 10001:10001
# The public API on every interface of the container. The operators' listeners (metrics, the codec server) do not
# follow HOST: they stay on the container's loopback unless the deployment sets AMY_METRICS_HOST / AMY_CODEC_HOST
# (deploy/compose.yaml does, and publishes them on the host's loopback only).
ENV HOST=0.0.0.0 PORT=3000
EXPOSE 3000
CMD ["node", "dist/api/main.js"]

# ---------------------------------------------------------------------------------------------------
# python: the interpreter the gates and the sandbox run, and bubblewrap, which confines the sandbox.
FROM runtime AS python
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 bubblewrap \
  && rm -rf /var/lib/apt/lists/*

# venv: the Python dependencies (gates-py/requirements.txt: numpy, scipy, pandas), in /app/.venv,
# where the worker looks by default (AMY_PYTHON overrides it).
FROM python AS venv
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3-venv \
  && rm -rf /var/lib/apt/lists/*
COPY gates-py/requirements.txt /tmp/requirements.txt
RUN python3 -m venv /app/.venv \
  && /app/.venv/bin/pip install --no-cache-dir --disable-pip-version-check -r /tmp/requirements.txt

# worker: the Temporal worker, the Python gates and the sandbox's runner, with the prebuilt workflow
# bundle (no bundling at start).
FROM python AS worker
COPY --from=venv /app/.venv .venv
COPY gates-py/gates gates-py/gates
COPY gates-py/sandbox gates-py/sandbox
USER 10001:10001
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
CMD ["node", "dist/worker/main.js"]
