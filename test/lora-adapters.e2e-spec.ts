import type { ChatCompletion, ModelList } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';

const BASE = 'conveyor-tiny';
const ADAPTED = 'conveyor-tiny-pirate';

/** The tiny model, and the generated `tiny-lora` adapter of it served as a model of its own. */
const config = writeDeploymentsFile({
  deployments: [
    {
      id: BASE,
      model: 'tiny',
      contextSize: 512,
      parallel: 2,
      adapters: [{ name: ADAPTED, path: 'tiny-lora' }],
    },
  ],
});

describe('LoRA adapters per request, by model name', () => {
  let platform: TestPlatform;

  const chat = async (
    model: string,
    content = 'Tell me about the sea.',
    temperature = 0.8,
  ): Promise<ChatCompletion> => {
    const res = await fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 12, temperature, seed: 7 }),
    });
    expect(res.status).toBe(200);
    return readJson<ChatCompletion>(res);
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config } });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('lists the adapter as a model of its own, with the deployment it adapts as its parent', async () => {
    const list = await readJson<ModelList>(await fetch(`${platform.baseUrl}/v1/models`));
    const byId = Object.fromEntries(list.data.map((m) => [m.id, m]));
    expect(byId[ADAPTED]).toMatchObject({ status: 'ready', parent: BASE });
    expect(byId[BASE]!.parent).toBeUndefined();
  });

  it('answers the same seeded request differently with the adapter, and alike each time on each model', async () => {
    const base = await chat(BASE);
    const adapted = await chat(ADAPTED);
    expect(adapted.model).toBe(ADAPTED);
    expect(adapted.choices[0]!.message.content).not.toBe(base.choices[0]!.message.content);
    expect((await chat(BASE)).choices[0]!.message.content).toBe(base.choices[0]!.message.content);
    expect((await chat(ADAPTED)).choices[0]!.message.content).toBe(adapted.choices[0]!.message.content);
  });

  it('runs requests for the base model and the adapter at once, each on its own contexts, none mixed', async () => {
    // Side by side and greedy, each model's two requests run on its own contexts: alike each other, unlike the other model's.
    const [base1, adapted1, base2, adapted2] = (
      await Promise.all([BASE, ADAPTED, BASE, ADAPTED].map((m) => chat(m, 'one', 0)))
    ).map((r) => r.choices[0]!.message.content);
    expect(base2).toBe(base1);
    expect(adapted2).toBe(adapted1);
    expect(adapted1).not.toBe(base1);
  });
});
