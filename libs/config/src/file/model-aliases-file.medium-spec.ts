import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ConfigError } from '../config-error.js';
import { loadConfig } from '../load-config.js';

// The alias table of the deployments file, read from a real file as CONVEYOR_CONFIG names it.
describe('deployments file model aliases', () => {
  let dir: string;
  let count = 0;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'conveyor-aliases-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const deployments = [
    { id: 'chat', model: 'tiny' },
    { id: 'embed', model: 'tiny', task: 'embeddings' },
  ];
  const load = async (file: object, env: Record<string, string> = {}) => {
    const path = join(dir, `conveyor-${count++}.yaml`);
    await writeFile(path, stringify({ deployments, ...file }));
    return loadConfig({ CONVEYOR_CONFIG: path, MODELS_DIR: '/srv/models', ...env });
  };
  const problems = async (file: object, env: Record<string, string> = {}): Promise<string[]> => {
    try {
      await load(file, env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error('expected the file to be refused');
  };

  it("reads the file's aliases and default, then MODEL_ALIASES' after them", async () => {
    const config = await load(
      {
        modelAliases: [
          { name: 'gpt-5*', deployment: 'chat' },
          { name: 'text-embedding-3-small', deployment: 'embed' },
        ],
        defaultDeployment: 'chat',
      },
      { MODEL_ALIASES: 'claude-*=chat' },
    );
    expect(config.modelNames).toEqual({
      aliases: [
        { name: 'gpt-5*', deployment: 'chat' },
        { name: 'text-embedding-3-small', deployment: 'embed' },
        { name: 'claude-*', deployment: 'chat' },
      ],
      defaultDeployment: 'chat',
    });
  });

  it('names each alias of an unknown deployment by its place, in one ConfigError', async () => {
    expect(
      await problems(
        {
          modelAliases: [
            { name: 'gpt-5*', deployment: 'chat' },
            { name: 'claude-*', deployment: 'claude' },
          ],
          defaultDeployment: 'gpt',
        },
        { MODEL_ALIASES: 'o3=o3' },
      ),
    ).toEqual([
      'modelAliases[1]: "claude-*" reaches "claude", which is not a deployment (deployments: "chat", "embed")',
      'MODEL_ALIASES: "o3" reaches "o3", which is not a deployment (deployments: "chat", "embed")',
      'defaultDeployment: "gpt" is not a deployment (deployments: "chat", "embed")',
    ]);
  });

  it('refuses an alias name with spaces', async () => {
    const [problem] = await problems({ modelAliases: [{ name: 'gpt 5', deployment: 'chat' }] });
    expect(problem).toContain("modelAliases[0].name must be 1-128 characters other than spaces, ',' and '='");
  });
});
