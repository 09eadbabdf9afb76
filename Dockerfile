# Dependencies: exactly the lock, production only, no install script
# (docs/reliability.md#persistence-and-the-supply-chain). node:22-slim ships npm 10;
# `--build-arg NPM="npx -y npm@11"` installs with npm 11 instead: the lock suits both.
FROM node:22-slim AS deps
WORKDIR /app
ARG NPM=npm
COPY package.json package-lock.json .npmrc ./
RUN ${NPM} ci --omit=dev --ignore-scripts --no-audit --no-fund
# onnxruntime-node ships its native library for every platform and architecture (some 240 MB);
# the image keeps only the one it loads, bin/napi-v6/<platform>/<arch>.
RUN keep="$(node -p 'process.platform + "/" + process.arch')" \
 && cd node_modules/onnxruntime-node/bin/napi-v6 && for dir in */*; do [ "$dir" = "$keep" ] || rm -rf "$dir"; done

# The image holds what the processes run: Node, the production dependencies, the sources and
# config.yaml. No npm, no tests, no documentation; it runs as the unprivileged `node` user.
FROM node:22-slim
WORKDIR /app
ENV NODE_ENV=production \
    KEY_DB_PATH=/data/gateway.sqlite
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg \
 && mkdir -p /data && chown node:node /data
COPY --from=deps /app/node_modules ./node_modules
COPY package.json config.yaml ./
COPY src ./src
COPY workers ./workers
COPY bin ./bin
USER node
EXPOSE 8000
# The API is alive when it answers HTTP at all: /health/live needs a key unless PUBLIC_PATHS opens
# it, and a 401 proves the process serves as well as a 200 does. Worker services turn it off.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health/live').then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--experimental-strip-types", "--min-semi-space-size=16", "src/server.ts"]
