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
EXPOSE 8000
CMD ["node", "--experimental-strip-types", "--min-semi-space-size=16", "src/server.ts"]
