# Rollgate image: builds the TypeScript once, runs the compiled CLI.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production ROLLGATE_BUILT=1
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY config ./config
COPY deploy/crds ./deploy/crds
USER node
EXPOSE 8080
ENTRYPOINT ["node", "bin/rollgate.js"]
CMD ["run", "--config", "/app/config/rollgate.yaml"]
