import OpenAI from 'openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { TestPlatform } from './support/platform.js';

/** Its template opens a thought for the reply, which the deployment's reasoning parser takes out. */
const THINKER = 'conveyor-think';

/**
 * Reasoning output items, end to end: a model that thinks before it answers, through the official
 * Node client, sync and streamed. The thought comes first, as a `reasoning` item of its own, and
 * never inside the message's text.
 */
describe('the Responses API with a reasoning model', () => {
  let platform: TestPlatform;
  let client: OpenAI;
  const ask = { model: THINKER, input: 'Why is the sea salty?', max_output_tokens: 24, temperature: 0 };

  beforeAll(async () => {
    const config = writeDeploymentsFile({
      deployments: [
        { id: THINKER, model: 'think', contextSize: 512, parallel: 1, threads: 1, reasoningParser: 'think' },
      ],
    });
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('puts the thought in a reasoning item before the message, sync and streamed alike', async () => {
    const sync = await client.responses.create(ask);
    expect(sync.status).toMatch(/^(completed|incomplete)$/);
    const [first, ...rest] = sync.output;
    expect(first?.type).toBe('reasoning');
    const thought = first?.type === 'reasoning' ? (first.content ?? []).map((c) => c.text).join('') : '';
    expect(thought.length).toBeGreaterThan(0);
    expect(first?.id).toMatch(/^rs_/);
    expect(rest.every((item) => item.type === 'message')).toBe(true);
    expect(sync.output_text).not.toContain('<think>');
    expect(sync.output_text).not.toContain('</think>');

    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ ...ask, stream: true })) events.push(event);
    const types = events.map((e) => e.type);
    // The reasoning item opens first, its text arrives as deltas, and it is done before the message opens.
    const deltas = events.filter((e) => e.type === 'response.reasoning_text.delta');
    expect(deltas.length).toBeGreaterThan(0);
    // (The generated model may think through its whole budget: its message is then empty, as in the sync reply.)
    const done = types.indexOf('response.reasoning_text.done');
    expect(done).toBeGreaterThan(types.indexOf('response.reasoning_text.delta'));
    const firstText = types.indexOf('response.output_text.delta');
    const textAfterThought = firstText === -1 ? sync.output_text === '' : done < firstText;
    expect(textAfterThought).toBe(true);
    const added = events.find((e) => e.type === 'response.output_item.added');
    expect(added?.type === 'response.output_item.added' && added.item.type).toBe('reasoning');
    const completed = events.at(-1);
    expect(completed?.type).toMatch(/^response\.(completed|incomplete)$/);
    const streamed = completed && 'response' in completed ? completed.response : null;
    // Greedy: the stream's thought and answer are the sync reply's, word for word.
    expect(streamed?.output.map((i) => i.type)).toEqual(sync.output.map((i) => i.type));
    const streamedThought = streamed?.output[0]?.type === 'reasoning' ? (streamed.output[0].content ?? []) : [];
    expect(streamedThought.map((c) => c.text).join('')).toBe(thought);
    expect(deltas.map((d) => (d.type === 'response.reasoning_text.delta' ? d.delta : '')).join('')).toBe(thought);
    expect(streamed?.output_text ?? '').toBe(sync.output_text);
  });

  it('gives a stateless client its reasoning as encrypted_content, and takes it back as input', async () => {
    const stateless = { ...ask, store: false, include: ['reasoning.encrypted_content' as const] };
    const first = await client.responses.create(stateless);
    const reasoning = first.output[0];
    expect(reasoning).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^cvr1\./) });
    const plain = await client.responses.create({ ...ask, store: false });
    expect(plain.output[0]).not.toHaveProperty('encrypted_content');

    // Codex sends the whole conversation back, its reasoning items included, every turn.
    const next = await client.responses.create({
      ...stateless,
      max_output_tokens: 4,
      input: [
        { role: 'user', content: ask.input },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { role: 'user', content: 'And the rivers?' },
      ],
    });
    expect(next.status).toMatch(/^(completed|incomplete)$/);
    const streamed: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ ...stateless, stream: true })) streamed.push(event);
    const done = streamed.flatMap((e) => (e.type === 'response.output_item.done' ? [e.item] : []));
    expect(done[0]).toMatchObject({ type: 'reasoning', encrypted_content: expect.stringMatching(/^cvr1\./) });
  });
});
