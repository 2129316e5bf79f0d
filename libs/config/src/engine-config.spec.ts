import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { loadConfig } from './load-config.js';
import { configError } from '../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('runs the model in process unless told otherwise, and takes no images', () => {
    const config = loadConfig({});
    expect(config.deployments[0]).toMatchObject({ engine: { kind: 'llama-cpp' }, vision: false });
    expect(config.worker.llamaServerBin).toBeNull();
    expect(loadConfig({ LLAMA_SERVER_BIN: 'bin/llama-server' }).worker.llamaServerBin).toBe(
      resolve('bin/llama-server'),
    );
  });

  it('serves the vision preset with its generated projector on llama-server', () => {
    const config = loadConfig({ MODEL: 'vision', MODELS_DIR: '/srv/models' });
    expect(config.deployments[0]).toMatchObject({
      id: 'conveyor-tiny-vision',
      model: 'vision',
      engine: { kind: 'llama-server', mmproj: '/srv/models/conveyor-tiny-vision-mmproj.gguf', imageMaxTokens: null },
      vision: true,
    });
  });

  it('reads a projector and its image budget, which imply llama-server', () => {
    const config = loadConfig({ MODEL: '/m/llava.gguf', MMPROJ: 'hf:user/repo/mmproj.gguf', IMAGE_MAX_TOKENS: '256' });
    expect(config.deployments[0]).toMatchObject({
      engine: { kind: 'llama-server', mmproj: 'hf:user/repo/mmproj.gguf', imageMaxTokens: 256 },
      vision: true,
    });
    // Without a projector llama-server serves text only.
    expect(loadConfig({ ENGINE: 'llama-server' }).deployments[0]).toMatchObject({
      engine: { kind: 'llama-server', mmproj: null, imageMaxTokens: null },
      vision: false,
    });
  });

  it('reads an OpenAI-compatible upstream: its URL, key and model, and whether it takes images', () => {
    const config = loadConfig({
      UPSTREAM_URL: 'http://vllm:8000/v1/',
      UPSTREAM_API_KEY: 'k',
      UPSTREAM_MODEL: 'Qwen/Qwen2.5-VL-7B-Instruct',
      VISION: 'true',
    });
    expect(config.deployments[0]).toMatchObject({
      id: 'Qwen2.5-VL-7B-Instruct',
      model: 'Qwen/Qwen2.5-VL-7B-Instruct',
      engine: { kind: 'openai', url: 'http://vllm:8000/v1', apiKey: 'k', model: 'Qwen/Qwen2.5-VL-7B-Instruct' },
      vision: true,
    });
    // MODEL names the upstream's model too; no key is none.
    expect(
      loadConfig({ ENGINE: 'openai', UPSTREAM_URL: 'https://api.example.com/v1', MODEL: 'small' }).deployments[0],
    ).toMatchObject({
      id: 'small',
      engine: { kind: 'openai', url: 'https://api.example.com/v1', apiKey: null, model: null },
      vision: false,
    });
  });

  it.each([
    [{ ENGINE: 'vllm' }, 'ENGINE must be one of llama-cpp, llama-server, openai, simulated (got "vllm")'],
    [{ ENGINE: 'openai', MODEL: 'm' }, 'UPSTREAM_URL is required for engine openai'],
    [{ UPSTREAM_URL: 'ftp://x/v1', MODEL: 'm' }, 'UPSTREAM_URL must be an http:// or https:// URL (got "ftp://x/v1")'],
    [{ UPSTREAM_URL: 'http://x/v1' }, 'MODEL or UPSTREAM_MODEL must name the model the upstream serves'],
    [{ UPSTREAM_MODEL: 'm' }, 'UPSTREAM_MODEL is set but UPSTREAM_URL is not'],
    [{ MMPROJ: '/m/mmproj.gguf', ENGINE: 'llama-cpp' }, 'MMPROJ needs engine llama-server, but ENGINE is llama-cpp'],
    [{ MMPROJ: '/m/mmproj.bin' }, 'MMPROJ must be a .gguf path or an hf: URI (got "/m/mmproj.bin")'],
    [
      { MODEL: 'vision', ENGINE: 'llama-cpp' },
      'MODEL vision (a preset with a vision projector) needs engine llama-server',
    ],
    [{ VISION: 'true' }, 'VISION needs a vision projector'],
    [{ IMAGE_MAX_TOKENS: '64' }, 'IMAGE_MAX_TOKENS needs a vision projector'],
    [{ IMAGE_MAX_TOKENS: '0', MMPROJ: '/m/p.gguf' }, 'IMAGE_MAX_TOKENS must be an integer from 1 to 65536'],
    [{ ENGINE: 'llama-server', TASK: 'embeddings' }, 'TASK embeddings runs on engine llama-cpp only'],
    [
      { MMPROJ: '/m/p.gguf', UPSTREAM_URL: 'http://x/v1', MODEL: '/m/x.gguf' },
      'UPSTREAM_URL needs engine openai, which MMPROJ rules out',
    ],
  ])('refuses the engine settings %j in one problem', (env, problem) => {
    const error = configError(env as Record<string, string>);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toContain(problem);
  });
});
