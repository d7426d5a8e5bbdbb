# One image for every Yiem process; docker-compose.yml picks the entry point per service.
# Stage 1 compiles the TypeScript and bundles each app's entry (scripts/bundleApps.ts); stage 2
# has production dependencies and compiled JS only,
# and runs `node` directly (no npm/npx/tsx in between), so SIGTERM reaches the process.
# NODE_IMAGE: where no registry is reachable, a local Node 20 image of the same layout
# (test/containers/baseImages.sh makes one): --build-arg NODE_IMAGE=localhost/yiem-node:20-bookworm

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/tools/package.json packages/tools/
COPY packages/testing/package.json packages/testing/
COPY apps/coordinator/package.json apps/coordinator/
COPY apps/tool-worker/package.json apps/tool-worker/
COPY apps/cli/package.json apps/cli/
COPY apps/gateway/package.json apps/gateway/
# --ignore-scripts here and below: no root `prepare` (the whole repo's build on install, for a
# clone); this stage compiles the shipped packages itself once their sources are in.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY packages packages
COPY apps/coordinator apps/coordinator
COPY apps/tool-worker apps/tool-worker
COPY apps/cli apps/cli
COPY apps/gateway apps/gateway
RUN npx tsc -b packages/core packages/tools packages/testing apps/coordinator apps/tool-worker apps/cli apps/gateway
# Each long-running app also as one file of code (dist/main.bundle.cjs) run by a loader
# (dist/main.bundle.js) with V8's code cache, its first tier written here (the image's dist is
# read-only to the `node` user): a replacement starts sooner.
COPY scripts/bundleApps.ts scripts/bundleCode.ts scripts/bundleFormat.ts scripts/bundleLoader.ts scripts/codeCacheFiles.ts scripts/
RUN npx tsx scripts/bundleApps.ts

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/tools/package.json packages/tools/
COPY packages/testing/package.json packages/testing/
COPY apps/coordinator/package.json apps/coordinator/
COPY apps/tool-worker/package.json apps/tool-worker/
COPY apps/cli/package.json apps/cli/
COPY apps/gateway/package.json apps/gateway/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/packages/core/dist packages/core/dist
COPY --from=build /app/packages/tools/dist packages/tools/dist
COPY --from=build /app/apps/coordinator/dist apps/coordinator/dist
COPY --from=build /app/apps/tool-worker/dist apps/tool-worker/dist
COPY --from=build /app/apps/cli/dist apps/cli/dist
COPY --from=build /app/apps/gateway/dist apps/gateway/dist
COPY --from=build /app/packages/testing/dist packages/testing/dist
COPY apps/gateway/page apps/gateway/page
COPY apps/cli/bin apps/cli/bin
# yiem-scripted-model (compose profile `scripted-model`): an offline stand-in for the model.
COPY packages/testing/bin packages/testing/bin
COPY packages/testing/examples packages/testing/examples
# The Lua scripts are read at run time from the sources folder (packages/core/src/redis/scripts.ts).
COPY packages/core/src/redis/scripts packages/core/src/redis/scripts
# A run feature's own scripts are in its folder (packages/core/src/features/<feature>/scripts).
COPY packages/core/src/features packages/core/src/features
# In a deployment a tool file that fails to load (a missing node_modules, a syntax error)
# stops the process at start, every failure named; YIEM_TOOLS_STRICT=0 starts without it.
ENV YIEM_TOOLS_STRICT=1
# Your tools, agents file and MCP config go under /app/project (docs/OPERATIONS.md,
# "Containers"): there they resolve @yiem/core and zod from /app/node_modules, and their
# own dependencies from /app/project/node_modules.
RUN mkdir -p /app/project && chown node:node /app/project
USER node
CMD ["node", "apps/coordinator/dist/main.bundle.js"]
