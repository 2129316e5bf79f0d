# Conveyor GPU worker: CUDA runtime base; node-llama-cpp's CUDA prebuilt binaries
# (@node-llama-cpp/linux-x64-cuda, installed as optional dependencies) run on it.
# Run with the NVIDIA container toolkit (docker run --gpus all / a GPU node in Kubernetes).
FROM node:24-bookworm-slim AS node

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM nvidia/cuda:12.8.1-runtime-ubuntu24.04
ENV NODE_ENV=production MODELS_DIR=/models WORKER_POOL=gpu
COPY --from=node /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /models
VOLUME /models
STOPSIGNAL SIGTERM
# Refuses to start when no GPU is usable, rather than silently running on the CPU.
CMD ["node", "dist/apps/worker/src/main.js", "--pool", "gpu"]
