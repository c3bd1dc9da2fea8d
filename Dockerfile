# syntax=docker/dockerfile:1
# Build: compile TypeScript to dist/ (the explorer bundle is committed; `npm run build` copies it and the schema).
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY schema ./schema
COPY src ./src
COPY emulator ./emulator
COPY explorer/assets ./explorer/assets
RUN npm run build

# Runtime: production dependencies only, no compiler, not root.
FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=4000 \
    HOST=0.0.0.0
WORKDIR /app
# DATA_DIR's default: without REDIS_URL the idempotency records live here; mount a volume on it to keep them
# across a new container (docs/deployment.md).
RUN mkdir -p /app/data && chown node:node /app/data
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
EXPOSE 4000
# /healthz answers without calling anything; node's fetch saves installing curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 and handles SIGTERM itself (drain, then exit 0): no shell, no npm in between.
# 64 MB semi-spaces (a 128 MB young generation; Node's defaults are 16 MB and 32 MB): an operation's
# objects live as long as its upstream calls take, and with the default most of them outlived a scavenge and were
# copied, then promoted for the old generation's collector (bench/README.md, peer: about a tenth
# of a cold page's CPU, for about 90 MB more peak memory). The same flag as `npm start`.
CMD ["node", "--max-semi-space-size=64", "dist/src/main.js"]
