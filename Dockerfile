# Rollgate image: bundles the TypeScript once (scripts/build.ts), runs the bundle.
FROM node:20-bookworm-slim AS build
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

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY config ./config
COPY deploy/crds ./deploy/crds
# The dashboard page's files, read at start from the package (src/server/dashboard/dashboard-assets.ts).
COPY src/server/dashboard/assets ./src/server/dashboard/assets
USER node
EXPOSE 8080
ENTRYPOINT ["node", "bin/rollgate.js"]
CMD ["run", "--config", "/app/config/rollgate.yaml"]
