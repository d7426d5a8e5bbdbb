# One image for every Yiem process; docker-compose.yml picks the entry point per service.
# The apps run TypeScript directly through tsx (no build step).
FROM node:20-bookworm-slim

WORKDIR /app

# Manifests first, so the dependency layer is cached until a package.json or the lock file changes.
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/tools/package.json packages/tools/
COPY apps/coordinator/package.json apps/coordinator/
COPY apps/tool-worker/package.json apps/tool-worker/
COPY apps/cli/package.json apps/cli/

# NODE_ENV is set only after this step: tsx is a dev dependency and the apps need it at runtime.
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json tsconfig.base.json ./
COPY packages packages
COPY apps apps
# The demo imports test/support (the scripted model).
COPY test/support test/support

ENV NODE_ENV=production

RUN chown -R node:node /app
USER node

CMD ["npx", "tsx", "apps/coordinator/src/main.ts"]
