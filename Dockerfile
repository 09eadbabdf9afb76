FROM node:22-slim
WORKDIR /app
ENV NODE_ENV=production ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json config.yaml ./
COPY src ./src
COPY workers ./workers
COPY bin ./bin
EXPOSE 8000
CMD ["node", "--experimental-strip-types", "--min-semi-space-size=16", "src/server.ts"]
