import { describe, expect, it } from '@jest/globals';
import type { DeploymentConfig, EngineConfig } from '@conveyor/config';
import type { EngineHost, EngineLogger } from './core/engine-factory.js';
import { ImageSource } from './core/image-source.port.js';
import { ENGINE_FACTORIES, startEngine } from './engines.js';
import { llamaCppOptions, llamaEmbeddingOptions } from './llama-cpp/llama-cpp.config.js';
import { llamaServerOptions } from './llama-server/llama-server.config.js';
import { OpenAiUpstreamEngine } from './openai-upstream/openai-upstream.engine.js';
import { openAiUpstreamOptions } from './openai-upstream/openai-upstream.config.js';
import { simulatedOptions } from './simulated/simulated.config.js';
import { SimulatedEngine } from './simulated/simulated.engine.js';

const deployment = <E extends EngineConfig>(engine: E): DeploymentConfig & { engine: E } => ({
  id: 'tiny-chat',
  model: 'tiny',
  pool: 'gpu',
  contextSize: 2048,
  promptCharsPerToken: 16,
  parallel: 3,
  threads: 2,
  flashAttention: 'off',
  defaults: {},
  auth: 'private',
  promptCache: 'full',
  promptCacheRam: 512,
  task: 'generate',
  reasoningParser: 'think',
  deadlineMs: null,
  load: 'pinned',
  memoryMb: null,
  lora: null,
  minWarm: 0,
  engine,
  vision: false,
});

class NoImages extends ImageSource {
  async read(): Promise<Buffer> {
    throw new Error('no images here');
  }
}

const named: string[] = [];
const quiet: EngineLogger = { log: () => undefined, warn: () => undefined };
const host: EngineHost = {
  modelsDir: '/models',
  llamaServerBin: '/opt/llama-server',
  llamaServerCache: '/tmp/conveyor-bench',
  allowCpuFallback: true,
  images: new NoImages(),
  log: quiet,
  logger: (name) => (named.push(name), quiet),
};

describe('the engine lookup', () => {
  it('has a factory for every kind of engine the config names', () => {
    const kinds: Record<EngineConfig['kind'], true> = {
      'llama-cpp': true,
      'llama-server': true,
      openai: true,
      simulated: true,
    };
    expect(Object.keys(ENGINE_FACTORIES).sort()).toEqual(Object.keys(kinds).sort());
  });

  it('starts the engine the deployment names, with its description', async () => {
    const d = deployment({ kind: 'openai', url: 'http://127.0.0.1:9/v1', apiKey: null, model: null });
    const { engine, describe } = await startEngine(d, host);
    try {
      expect(engine).toBeInstanceOf(OpenAiUpstreamEngine);
      expect(describe).toBe('tiny at http://127.0.0.1:9/v1 (an OpenAI-compatible upstream, with images)');
    } finally {
      await engine.dispose();
    }
  });

  it('starts a simulated engine without loading anything', async () => {
    const d = deployment({ kind: 'simulated', ttftMs: 5, tpotMs: 2, outputTokens: 8, text: 'a b' });
    const { engine, describe } = await startEngine(d, host);
    try {
      expect(engine).toBeInstanceOf(SimulatedEngine);
      expect(describe).toMatch(/^a simulated model \(no model loaded: first token after 5 ms, then one each 2 ms/);
    } finally {
      await engine.dispose();
    }
  });
});

describe("each engine's config reader", () => {
  it("simulated: its pace and text, the deployment's context and sequences", () => {
    const engine = { kind: 'simulated', ttftMs: 50, tpotMs: 10, outputTokens: 32, text: 'hello world' } as const;
    expect(simulatedOptions(deployment(engine))).toEqual({
      ttftMs: 50,
      tpotMs: 10,
      outputTokens: 32,
      text: 'hello world',
      contextSize: 2048,
      sequences: 3,
    });
  });

  it('llama-cpp: the context, threads, device and cache of the deployment, and its name for the metrics', () => {
    expect(llamaCppOptions(deployment({ kind: 'llama-cpp' }), host, '/models/tiny.gguf')).toEqual({
      modelPath: '/models/tiny.gguf',
      contextSize: 2048,
      parallel: 3,
      threads: 2,
      flashAttention: 'off',
      gpu: true,
      allowCpuFallback: true,
      reasoningParser: 'think',
      promptCache: 'full',
      promptCacheRam: 512 * 2 ** 20,
      deployment: 'tiny-chat',
      log: host.log,
    });
    expect(llamaEmbeddingOptions(deployment({ kind: 'llama-cpp' }), { allowCpuFallback: false }, '/m.gguf')).toEqual({
      modelPath: '/m.gguf',
      contextSize: 2048,
      threads: 2,
      flashAttention: 'off',
      gpu: true,
      allowCpuFallback: false,
    });
  });

  it('llama-server: the files found, the context, and a logger named after the deployment', () => {
    const d = deployment({ kind: 'llama-server', mmproj: 'tiny-vision', imageMaxTokens: 64 });
    const files = { binary: '/opt/llama-server', modelPath: '/m.gguf', mmprojPath: '/p.gguf' };
    const options = llamaServerOptions(d, host, files);
    expect(options).toMatchObject({
      ...files,
      imageMaxTokens: 64,
      contextSize: 2048,
      parallel: 3,
      threads: 2,
      flashAttention: 'off',
      gpu: true,
      reasoningParser: 'think',
      images: host.images,
    });
    expect(named.at(-1)).toBe('llama-server tiny-chat');
  });

  it("openai: the upstream's URL, key and model, the deployment's model when it names none", () => {
    const upstream = { kind: 'openai', url: 'http://up/v1', apiKey: 'k', model: 'served-name' } as const;
    expect(openAiUpstreamOptions(deployment(upstream), { images: null })).toEqual({
      url: 'http://up/v1',
      apiKey: 'k',
      model: 'served-name',
      images: null,
      name: 'The upstream of "tiny-chat" (http://up/v1)',
    });
    expect(openAiUpstreamOptions(deployment({ ...upstream, model: null }), { images: null }).model).toBe('tiny');
  });
});
