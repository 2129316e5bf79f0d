# Conveyor CPU worker: node-llama-cpp's prebuilt CPU binary ships in its npm package.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# One libuv thread per deployment served: a token's decode and sampling then share a thread.
ENV NODE_ENV=production MODELS_DIR=/models WORKER_POOL=cpu UV_THREADPOOL_SIZE=1
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /models && chown node:node /models
VOLUME /models
USER node
# SIGTERM: the worker stops taking jobs and finishes the ones in hand before exiting.
STOPSIGNAL SIGTERM
CMD ["node", "dist/apps/worker/src/main.js", "--pool", "cpu"]
