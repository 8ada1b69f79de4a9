# Rollgate image: bundles the TypeScript once (scripts/build.ts), runs the bundle.
# Node 24 LTS, pinned to a release so a rebuild gets the Node that was tested (Node 20 reached end of life on
# 2026-04-30). .ci/run builds and runs the unit tests on the same version (NODE24_VERSION there): change both.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# prepare (the build) needs the sources, which come in the next layers: skip it here, then let npm rebuild
# run the install scripts of the dependencies that --ignore-scripts skipped too.
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild
COPY tsconfig.json ./
COPY scripts/build.ts ./scripts/
COPY src ./src
COPY workers ./workers
RUN npm run build && npm prune --omit=dev

FROM ${NODE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY config ./config
COPY deploy/crds ./deploy/crds
# The dashboard page's files, read at start from the package (src/server/dashboard/dashboard-assets.ts); its
# library (preact, htm) is read from node_modules, a production dependency kept by the prune above.
COPY src/server/dashboard/assets ./src/server/dashboard/assets
USER node
EXPOSE 8080
ENTRYPOINT ["node", "bin/rollgate.js"]
CMD ["run", "--config", "/app/config/rollgate.yaml"]
