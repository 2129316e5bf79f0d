// Starting a deployment's llama-server, and the upstream engine that speaks to it over loopback HTTP.
import { OpenAiUpstreamEngine } from '../openai-upstream/openai-upstream.engine.js';
import { llamaServerArgs, type LlamaServerEngineOptions } from './llama-server.options.js';
import { LlamaServerProcess } from './llama-server.process.js';

/** One running server and the upstream engine that speaks to it. */
export interface Live {
  server: LlamaServerProcess;
  engine: OpenAiUpstreamEngine;
  startedAt: number;
}

export function startServer(options: LlamaServerEngineOptions): Promise<LlamaServerProcess> {
  return LlamaServerProcess.start({
    binary: options.binary,
    args: llamaServerArgs(options),
    startTimeoutMs: options.startTimeoutMs ?? 10 * 60_000,
  });
}

export function upstreamOf(server: LlamaServerProcess, options: LlamaServerEngineOptions, opensThought: boolean): Live {
  const engine = new OpenAiUpstreamEngine({
    url: server.url,
    apiKey: server.apiKey,
    model: 'default',
    dialect: 'llama-server',
    images: options.images,
    maxChoices: options.parallel,
    keepAlive: false,
    name: 'llama-server',
    thoughts: options.reasoningParser === 'think' ? { opensThought } : undefined,
  });
  return { server, engine, startedAt: Date.now() };
}
