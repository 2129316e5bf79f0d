# Conveyor worker for vision deployments (a projector, `mmproj`): the worker runs llama.cpp's server as a
# child for them, built here from the llama.cpp source node-llama-cpp ships (about 15 minutes on 2 cores).
# It serves text-only deployments in process as the CPU worker does.
FROM node:24-bookworm-slim AS build
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      cmake g++ make git ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
# Built once (the compiler's output goes to stdout), then asked again for the cached binary's path; its
# shared libraries sit beside it.
RUN export CONVEYOR_BENCH_CACHE=/tmp/llama-cache && npm run -s build:llama-server >/dev/null \
    && bin="$(npm run -s build:llama-server)" && mkdir -p /opt/llama.cpp && cp -a "$(dirname "$bin")"/. /opt/llama.cpp/ && rm -rf /tmp/llama-cache
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# llama-server's OpenMP runtime; setpriv (util-linux) stops the child when the worker dies.
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libgomp1 util-linux && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production MODELS_DIR=/models WORKER_POOL=cpu UV_THREADPOOL_SIZE=1 \
    LLAMA_SERVER_BIN=/opt/llama.cpp/llama-server LD_LIBRARY_PATH=/opt/llama.cpp
WORKDIR /app
COPY --from=build /opt/llama.cpp /opt/llama.cpp
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /models && chown node:node /models
VOLUME /models
USER node
STOPSIGNAL SIGTERM
CMD ["node", "dist/apps/worker/src/main.js", "--pool", "cpu"]
