import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError } from '../config-error.js';
import { loadConfig } from '../load-config.js';

// The engine fields of the deployments file, read from a real file as CONVEYOR_CONFIG names it.
describe('deployments file engines', () => {
  let dir: string;
  let count = 0;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'conveyor-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const load = async (deployments: object[], env: Record<string, string> = {}) => {
    const path = join(dir, `conveyor-${count++}.yaml`);
    await writeFile(path, stringify({ deployments }));
    return loadConfig({ CONVEYOR_CONFIG: path, MODELS_DIR: '/srv/models', ...env });
  };
  const problems = async (deployments: object[], env: Record<string, string> = {}): Promise<string[]> => {
    try {
      await load(deployments, env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error('expected the file to be refused');
  };

  it('reads each engine: in process by default, llama-server for a projector, openai for an upstream', async () => {
    const config = await load(
      [
        { id: 'text', model: 'tiny' },
        { id: 'eyes', model: 'vision', parallel: 2 },
        { id: 'llava', model: '/m/llava.gguf', mmproj: '/m/mmproj.gguf', imageMaxTokens: 128 },
        {
          id: 'remote',
          engine: 'openai',
          vision: true,
          upstream: { url: 'http://10.0.0.9:8000/v1', apiKeyEnv: 'VLLM_KEY', model: 'Qwen/Qwen2.5-VL-7B-Instruct' },
        },
      ],
      { VLLM_KEY: 'secret' },
    );
    expect(config.deployments.map((d) => [d.id, d.model, d.engine, d.vision])).toEqual([
      ['text', 'tiny', { kind: 'llama-cpp' }, false],
      [
        'eyes',
        'vision',
        { kind: 'llama-server', mmproj: '/srv/models/conveyor-tiny-vision-mmproj.gguf', imageMaxTokens: null },
        true,
      ],
      ['llava', '/m/llava.gguf', { kind: 'llama-server', mmproj: '/m/mmproj.gguf', imageMaxTokens: 128 }, true],
      [
        'remote',
        'Qwen/Qwen2.5-VL-7B-Instruct',
        { kind: 'openai', url: 'http://10.0.0.9:8000/v1', apiKey: 'secret', model: 'Qwen/Qwen2.5-VL-7B-Instruct' },
        true,
      ],
    ]);
  });

  it('names the field at fault, in one message per problem', async () => {
    expect(await problems([{ id: 'a', model: 'tiny', engine: 'vllm' }])).toEqual([
      expect.stringContaining(
        'deployments[0].engine must be one of the following values: llama-cpp, llama-server, openai, simulated',
      ),
    ]);
    expect(
      await problems([
        { id: 'a', model: 'tiny', upstream: { url: 'http://x/v1', apiKey: 'k', apiKeyEnv: 'MISSING' } },
        { id: 'b', engine: 'openai', upstream: { url: 'http://x/v1' } },
        { id: 'c', model: 'tiny', engine: 'llama-cpp', vision: true },
      ]),
    ).toEqual([
      'deployments[0].upstream.apiKey and deployments[0].upstream.apiKeyEnv are exclusive: set one',
      'deployments[0].upstream.apiKeyEnv names MISSING, which is not set',
      'deployments[1].model or deployments[1].upstream.model must name the model the upstream serves',
      'deployments[2].vision needs a vision projector (deployments[2].mmproj, engine llama-server) or an openai upstream that takes images',
    ]);
    // A deployment run in the worker still needs its model.
    expect(await problems([{ id: 'a', engine: 'llama-server' }])).toEqual([
      expect.stringContaining('deployments[0].model'),
    ]);
  });

  it('reads a simulated engine: its pace and text, defaults for what it leaves out, any model name', async () => {
    const config = await load([
      { id: 'sim', engine: 'simulated', simulated: { ttftMs: 250, tpotMs: 40 }, contextSize: 512, parallel: 16 },
      { id: 'sim-named', model: 'gpt-like', simulated: { outputTokens: 8, text: 'ok' } },
    ]);
    expect(config.deployments.map((d) => [d.id, d.model, d.engine, d.contextSize, d.parallel, d.vision])).toEqual([
      [
        'sim',
        'simulated',
        {
          kind: 'simulated',
          ttftMs: 250,
          tpotMs: 40,
          outputTokens: 64,
          text: 'The quick brown fox jumps over the lazy dog.',
        },
        512,
        16,
        false,
      ],
      [
        'sim-named',
        'gpt-like',
        { kind: 'simulated', ttftMs: 100, tpotMs: 20, outputTokens: 8, text: 'ok' },
        4096,
        4,
        false,
      ],
    ]);
    // The file's own checks stop at the first field at fault.
    expect(await problems([{ id: 'b', engine: 'simulated', simulated: { tpotMs: 0 } }])).toEqual([
      expect.stringContaining('deployments[0].simulated.tpotMs must not be less than 1'),
    ]);
    expect(await problems([{ id: 'b', simulated: { text: '  ' } }])).toEqual([
      expect.stringContaining('deployments[0].simulated.text must hold at least one word'),
    ]);
    expect(
      await problems([
        { id: 'a', engine: 'llama-cpp', model: 'tiny', simulated: { tpotMs: 5 } },
        { id: 'c', engine: 'simulated', mmproj: '/m/p.gguf', vision: true },
      ]),
    ).toEqual([
      'deployments[0].simulated needs engine simulated, but deployments[0].engine is llama-cpp',
      'deployments[1].mmproj needs engine llama-server, but deployments[1].engine is simulated',
      'deployments[1].mmproj is not for engine simulated',
      'deployments[1].vision is not for engine simulated: it takes no images',
    ]);
  });

  it('serves each adapter as a deployment of its own: the base model, its settings, and the adapter', async () => {
    const config = await load([
      {
        id: 'chat',
        model: 'tiny',
        parallel: 3,
        load: 'on-demand',
        adapters: [{ name: 'chat-pirate', path: 'tiny-lora' }],
      },
    ]);
    expect(config.deployments.map((d) => [d.id, d.model, d.parallel, d.load, d.lora])).toEqual([
      ['chat', 'tiny', 3, 'on-demand', null],
      ['chat-pirate', 'tiny', 3, 'on-demand', { path: 'tiny-lora', scale: 1, base: 'chat' }],
    ]);
    expect(
      await problems([
        { id: 'up', upstream: { url: 'http://127.0.0.1:1', model: 'm' }, adapters: [{ name: 'x', path: 'a.gguf' }] },
      ]),
    ).toEqual([expect.stringMatching(/deployments\[0\]\.adapters needs engine llama-cpp and task generate/)]);
  });
});
