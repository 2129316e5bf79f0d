import OpenAI, { toFile } from 'openai';
import type { OpenAiErrorBody, RerankResponse, ScoreResponse } from '@conveyor/openai';
import { fileLines, waitForBatch } from './support/batches.js';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform } from './support/platform.js';

const RANKER = 'conveyor-rerank';
const CHAT = 'conveyor-tiny';
const QUERY = 'the capital of France';
const DOCUMENTS = [
  'The cat sat on the mat.',
  'Paris is the capital of France.',
  'Bananas are yellow.',
  'A quiet town.',
];

const config = writeDeploymentsFile({
  deployments: [
    { id: RANKER, model: 'rerank', task: 'rerank', contextSize: 512, parallel: 1, threads: 1 },
    { id: CHAT, model: 'tiny', contextSize: 512, parallel: 1, threads: 1 },
  ],
});

describe('rerank end to end (API → BullMQ → worker ranking context → client)', () => {
  let platform: TestPlatform;
  let client: OpenAI;

  const post = (body: unknown, path = '/v1/rerank') =>
    fetch(`${platform.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const rerank = async (body: Record<string, unknown>): Promise<RerankResponse> => {
    const res = await post({ model: RANKER, query: QUERY, documents: DOCUMENTS, ...body });
    expect(res.status).toBe(200);
    return readJson<RerankResponse>(res);
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { CONVEYOR_CONFIG: config } });
    client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('scores every document, best first, the same scores every time and in any order', async () => {
    const first = await rerank({});
    expect(first).toMatchObject({ object: 'list', model: RANKER, id: expect.stringMatching(/^rerank-/) });
    expect(first.results.map((r) => r.index).sort()).toEqual([0, 1, 2, 3]);
    const scores = first.results.map((r) => r.relevance_score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const score of scores) expect(score >= 0 && score <= 1).toBe(true);
    expect(first.usage.prompt_tokens).toBeGreaterThan(DOCUMENTS.length * 4);
    expect(first.usage.total_tokens).toBe(first.usage.prompt_tokens);

    const again = await rerank({});
    expect(again.results).toEqual(first.results);
    // The documents reversed: each keeps its score, under its new index.
    const reversed = await rerank({ documents: [...DOCUMENTS].reverse() });
    const byText = (r: RerankResponse, docs: string[]) =>
      Object.fromEntries(r.results.map((x) => [docs[x.index], x.relevance_score]));
    expect(byText(reversed, [...DOCUMENTS].reverse())).toEqual(byText(first, DOCUMENTS));
  });

  it('keeps the top_n best, with their documents where return_documents asks', async () => {
    const all = await rerank({});
    const top = await rerank({ top_n: 2, return_documents: true });
    expect(top.results.map((r) => r.index)).toEqual(all.results.slice(0, 2).map((r) => r.index));
    for (const r of top.results) expect(r.document).toEqual({ text: DOCUMENTS[r.index] });
    expect(all.results[0]!.document).toBeUndefined();
  });

  it('answers a wrong request or model with a 400 in OpenAI’s shape', async () => {
    const refused = async (body: Record<string, unknown>, path?: string) => {
      const res = await post(body, path);
      expect(res.status).toBe(400);
      return (await readJson<OpenAiErrorBody>(res)).error;
    };
    expect(await refused({ model: RANKER, query: QUERY, documents: [] })).toMatchObject({ param: 'documents' });
    expect(await refused({ model: RANKER, documents: DOCUMENTS })).toMatchObject({ param: 'query' });
    expect(await refused({ model: CHAT, query: QUERY, documents: DOCUMENTS })).toMatchObject({
      code: 'model_not_supported',
      param: 'model',
    });
    const chat = await refused(
      { model: RANKER, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
      '/v1/chat/completions',
    );
    expect(chat.message).toMatch(/reranking only \(POST \/v1\/rerank\)/);
  });

  it('runs rerank lines as a batch, each line scored as the route scores it', async () => {
    const line = (id: string, documents: string[]) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/rerank',
        body: { model: RANKER, query: QUERY, documents },
      });
    const file = await client.files.create({
      file: await toFile(
        Buffer.from([line('a', DOCUMENTS), line('b', DOCUMENTS.slice(0, 2))].join('\n') + '\n'),
        'r.jsonl',
      ),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/rerank' as '/v1/embeddings',
      completion_window: '24h',
    });
    const batch = await waitForBatch(client, created.id);
    expect(batch.status).toBe('completed');
    const out = new Map((await fileLines<RerankResponse>(client, batch.output_file_id)).map((l) => [l.custom_id, l]));
    const direct = await rerank({});
    expect(out.get('a')?.response?.status_code).toBe(200);
    expect(out.get('a')?.response?.body.results).toEqual(direct.results);
    expect(out.get('b')?.response?.body.results).toHaveLength(2);
  });

  describe('/v1/score (vLLM’s score API)', () => {
    const score = async (body: Record<string, unknown>): Promise<ScoreResponse> => {
      const res = await post({ model: RANKER, ...body }, '/v1/score');
      expect(res.status).toBe(200);
      return readJson<ScoreResponse>(res);
    };

    it('scores one text_1 against each text_2, in order, as rerank scores its documents', async () => {
      const scored = await score({ text_1: QUERY, text_2: DOCUMENTS });
      expect(scored).toMatchObject({ object: 'list', model: RANKER, id: expect.stringMatching(/^score-/) });
      expect(typeof scored.created).toBe('number');
      expect(scored.data.map((d) => [d.index, d.object])).toEqual(DOCUMENTS.map((_, i) => [i, 'score']));
      const ranked = await rerank({});
      for (const r of ranked.results) expect(scored.data[r.index]!.score).toBe(r.relevance_score);
      expect(scored.usage.prompt_tokens).toBe(ranked.usage.prompt_tokens);
      // Both strings: one pair.
      const one = await score({ text_1: QUERY, text_2: DOCUMENTS[1] });
      expect(one.data).toEqual([{ index: 0, object: 'score', score: scored.data[1]!.score }]);
    });

    it('pairs lists of the same length item by item', async () => {
      const queries = [QUERY, 'a yellow fruit', QUERY];
      const texts = [DOCUMENTS[1]!, DOCUMENTS[2]!, DOCUMENTS[0]!];
      const pairs = await score({ text_1: queries, text_2: texts });
      expect(pairs.data).toHaveLength(3);
      // Each pair as scored alone.
      for (const [i, text] of texts.entries()) {
        const alone = await score({ text_1: queries[i], text_2: text });
        expect(pairs.data[i]!.score).toBe(alone.data[0]!.score);
      }
      expect(pairs.data[0]!.score).not.toBe(pairs.data[1]!.score);
    });

    it('refuses what it cannot pair, and models that do not rerank, in OpenAI’s shape', async () => {
      const refused = async (body: Record<string, unknown>) => {
        const res = await post(body, '/v1/score');
        expect(res.status).toBe(400);
        return (await readJson<OpenAiErrorBody>(res)).error;
      };
      expect(await refused({ model: RANKER, text_1: [QUERY, QUERY], text_2: DOCUMENTS })).toMatchObject({
        param: 'text_1',
      });
      expect(await refused({ model: RANKER, text_1: QUERY, text_2: [] })).toMatchObject({ param: 'text_2' });
      expect(await refused({ model: RANKER, text_1: QUERY, text_2: [''] })).toMatchObject({ param: 'text_2' });
      expect(await refused({ model: RANKER, text_2: DOCUMENTS })).toMatchObject({ param: 'text_1' });
      expect(await refused({ model: CHAT, text_1: QUERY, text_2: DOCUMENTS })).toMatchObject({
        code: 'model_not_supported',
        param: 'model',
      });
    });

    it('runs score lines as a batch, each answered as the route answers it', async () => {
      const body = { model: RANKER, text_1: QUERY, text_2: DOCUMENTS };
      const file = await client.files.create({
        file: await toFile(
          Buffer.from(JSON.stringify({ custom_id: 's', method: 'POST', url: '/v1/score', body }) + '\n'),
          's.jsonl',
        ),
        purpose: 'batch',
      });
      const created = await client.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/score' as '/v1/embeddings',
        completion_window: '24h',
      });
      const batch = await waitForBatch(client, created.id);
      expect(batch.status).toBe('completed');
      const [line] = await fileLines<ScoreResponse>(client, batch.output_file_id);
      expect(line?.response?.status_code).toBe(200);
      expect(line?.response?.body.data).toEqual((await score(body)).data);
    });
  });
});
