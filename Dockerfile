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

# kustomize, for sources that are Kustomize overlays (docs/install.md#kustomize): a pinned release, its
# tarball checked against the SHA-256 of that release before it is unpacked. v5.5.0 is the kustomize that
# kubectl 1.32 embeds, which the tests render with. The stage runs on the build machine's platform (it only
# downloads) and fetches the binary of the image's platform (TARGETARCH, set by BuildKit/buildx).
# To move to another release, change the version and both sums together (the release's checksums.txt).
FROM --platform=${BUILDPLATFORM} ${NODE_IMAGE} AS kustomize
ARG TARGETARCH
ARG KUSTOMIZE_VERSION=5.5.0
ARG KUSTOMIZE_SHA256_AMD64=6703a3a70a0c47cf0b37694030b54f1175a9dfeb17b3818b623ed58b9dbc2a77
ARG KUSTOMIZE_SHA256_ARM64=b4170d1acb8cfacace9f72884bef957ff56efdcd4813b66e7604aabc8b57e93d
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl && rm -rf /var/lib/apt/lists/*
RUN set -eu; \
    case "${TARGETARCH}" in \
      amd64) sum="${KUSTOMIZE_SHA256_AMD64}" ;; \
      arm64) sum="${KUSTOMIZE_SHA256_ARM64}" ;; \
      *) echo "kustomize: no checksum for TARGETARCH='${TARGETARCH}' (build with BuildKit, or --build-arg TARGETARCH=amd64|arm64)" >&2; exit 1 ;; \
    esac; \
    tarball="kustomize_v${KUSTOMIZE_VERSION}_linux_${TARGETARCH}.tar.gz"; \
    curl -fsSL --retry 3 -o "/tmp/${tarball}" \
      "https://github.com/kubernetes-sigs/kustomize/releases/download/kustomize%2Fv${KUSTOMIZE_VERSION}/${tarball}"; \
    echo "${sum}  /tmp/${tarball}" | sha256sum --check --strict -; \
    tar -xzf "/tmp/${tarball}" -C /usr/local/bin kustomize; \
    chmod 0755 /usr/local/bin/kustomize; \
    rm "/tmp/${tarball}"

FROM ${NODE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=kustomize /usr/local/bin/kustomize /usr/local/bin/kustomize
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
