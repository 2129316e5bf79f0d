import OpenAI from 'openai';
import { fileLines, jsonl, waitForBatch, type LineSpec } from './support/batches.js';
import { TestPlatform } from './support/platform.js';
import { toFile } from 'openai';

/**
 * The batch plan on real llama.cpp: lines over a few long instructions, shuffled, some asked twice. The
 * plan feeds each instruction's lines together (so the worker computes each instruction about once and
 * its sequences copy it) and runs a greedy line asked again once.
 */
const MODEL = 'conveyor-tiny';
const INSTRUCTIONS = ['grade', 'translate', 'extract'].map(
  (task) => `You ${task} the item the user gives. ` + `Follow the house style for ${task} tasks closely. `.repeat(12),
);

type Usage = { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };
type Body = { choices: Array<{ message: { content: string } }>; usage: Usage };
type PlannedBatch = OpenAI.Batches.Batch & {
  plan?: { groups: number; repeats_folded: number; prompt_tokens: { total: number; cached: number; folded: number } };
};

/** 24 lines, 8 per instruction, in a shuffled order; 6 of them ask an earlier line's question again. */
function lines(): LineSpec[] {
  const distinct = Array.from({ length: 18 }, (_, i) => ({ system: INSTRUCTIONS[i % 3]!, item: `item ${i}` }));
  const asked = [...distinct, ...[0, 4, 8, 9, 13, 17].map((i) => distinct[i]!)];
  // A fixed shuffle: the order a file made by hand has, instructions mixed.
  const order = asked.map((_, i) => (i * 7) % asked.length);
  return order.map((i, n) => ({
    custom_id: `line-${n}`,
    body: {
      model: MODEL,
      messages: [
        { role: 'system', content: asked[i]!.system },
        { role: 'user', content: asked[i]!.item },
      ],
      max_tokens: 4,
      temperature: 0,
    },
  }));
}

describe('batch plan: lines fed by shared instructions, repeats run once (real llama.cpp)', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 1, env: { PARALLEL: '2', BATCH_INFLIGHT: '4' } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused' });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  async function run(spec: LineSpec[], extra: Record<string, unknown> = {}): Promise<PlannedBatch> {
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl(spec)), 'in.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      ...extra,
    } as OpenAI.Batches.BatchCreateParams);
    return (await waitForBatch(client, created.id, (b) => b.status === 'completed', 120_000)) as PlannedBatch;
  }

  it('answers every custom_id once, runs each repeat once, and evaluates each instruction about once', async () => {
    const spec = lines();
    const batch = await run(spec);
    expect(batch.request_counts).toEqual({ total: 24, completed: 24, failed: 0 });
    expect(batch.plan).toMatchObject({ groups: 3, repeats_folded: 6 });

    const out = await fileLines<Body>(client, batch.output_file_id);
    expect(out.map((l) => l.custom_id).sort()).toEqual(spec.map((l) => l.custom_id).sort());
    // A repeat's reply is its first asking's, word for word.
    const question = (l: LineSpec) => JSON.stringify(l.body.messages);
    const replyOf = new Map<string, string>();
    for (const line of out) {
      const asked = question(spec.find((s) => s.custom_id === line.custom_id)!);
      const text = line.response!.body.choices[0]!.message.content;
      const usage = line.response!.body.usage;
      if (replyOf.has(asked)) {
        expect(text).toBe(replyOf.get(asked));
        // A repeat evaluated none of its prompt: all of it counts as cached.
        expect(usage.prompt_tokens_details?.cached_tokens).toBe(usage.prompt_tokens);
      } else replyOf.set(asked, text);
    }
    expect(replyOf.size).toBe(18);

    // What ran: 18 lines. Each instruction's prompt is computed about once, its other lines reuse it.
    const { total, cached, folded } = batch.plan!.prompt_tokens;
    const instruction = Math.min(...out.map((l) => l.response!.body.usage.prompt_tokens));
    expect(folded).toBeGreaterThanOrEqual(6 * instruction);
    expect(cached).toBeGreaterThan(0);
    // The floor: 3 instructions once, and each of 18 lines' own few tokens; allow one more instruction.
    expect(total - cached).toBeLessThan(4 * instruction + 18 * 40);

    const metrics = await (await fetch(`${platform.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`conveyor_batch_lines_folded_total\\{deployment="${MODEL}"\\} 6`));
  });

  it('runs every line when the batch turns folding off', async () => {
    const batch = await run(lines(), { fold_repeats: false });
    expect(batch.request_counts).toEqual({ total: 24, completed: 24, failed: 0 });
    expect(batch.plan).toMatchObject({ groups: 3, repeats_folded: 0, prompt_tokens: { folded: 0 } });
  });
});
