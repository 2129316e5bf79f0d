import OpenAI from 'openai';
import type { UsageCompletionsPage, UsageCompletionsResult } from '@conveyor/openai';
import { TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const ADMIN_KEY = 'admin-secret-for-usage';
const hello = [{ role: 'user' as const, content: 'Say hello to the queue.' }];

/** The value of the sample of `name` whose labels include `labels` (`a="1",b="2"`, in any order). */
function sample(text: string, name: string, labels: string): number {
  const wanted = labels.split(/,(?=[a-z_]+=")/);
  const line = text.split('\n').find((l) => {
    const match = /^([^{ ]+)\{(.*)\} /.exec(l);
    if (match?.[1] !== name) return false;
    const has = match[2]!.split(/,(?=[a-z_]+=")/);
    return wanted.every((label) => has.includes(label));
  });
  return Number(line?.split(' ').at(-1) ?? NaN);
}

describe('metrics and usage of a running platform', () => {
  let platform: TestPlatform;
  let teamA: OpenAI;
  let teamB: OpenAI;
  let admin: OpenAI;
  /** What each key's replies said they used. */
  const used = { 'env-1': { input: 0, output: 0, requests: 0 }, 'env-2': { input: 0, output: 0, requests: 0 } };
  const startTime = Math.floor(Date.now() / 1000) - 60;

  const count = (key: keyof typeof used, usage: { prompt_tokens: number; completion_tokens: number } | undefined) => {
    used[key].input += usage?.prompt_tokens ?? 0;
    used[key].output += usage?.completion_tokens ?? 0;
    used[key].requests += 1;
  };

  /** The usage route's results summed over its buckets, by key name. */
  const usageByKey = async (
    query: Partial<Parameters<OpenAI['admin']['organization']['usage']['completions']>[0]> = {},
  ) => {
    const page = (await admin.admin.organization.usage.completions({
      start_time: startTime,
      bucket_width: '1h',
      group_by: ['api_key_id', 'model'],
      ...query,
    })) as unknown as UsageCompletionsPage;
    const byKey = new Map<string, UsageCompletionsResult>();
    for (const bucket of page.data) {
      for (const r of bucket.results) {
        const seen = byKey.get(r.api_key_id ?? '');
        if (!seen) byKey.set(r.api_key_id ?? '', { ...r });
        else {
          seen.input_tokens += r.input_tokens;
          seen.output_tokens += r.output_tokens;
          seen.num_model_requests += r.num_model_requests;
        }
      }
    }
    return byKey;
  };

  /** Usage is counted as each reply ends, beside its answer: wait until every request made is in. */
  const settledUsage = async () => {
    const expected = used['env-1'].requests + used['env-2'].requests;
    for (;;) {
      const byKey = await usageByKey();
      const counted = [...byKey.values()].reduce((n, r) => n + r.num_model_requests, 0);
      if (counted >= expected) return byKey;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  beforeAll(async () => {
    platform = await TestPlatform.start({ env: { API_KEYS: 'team-a-key,team-b-key', ADMIN_KEY } });
    const baseURL = `${platform.baseUrl}/v1`;
    teamA = new OpenAI({ baseURL, apiKey: 'team-a-key' });
    teamB = new OpenAI({ baseURL, apiKey: 'team-b-key' });
    admin = new OpenAI({ baseURL, apiKey: null, adminAPIKey: ADMIN_KEY });

    const first = await teamA.chat.completions.create({ model: MODEL, messages: hello, max_tokens: 12 });
    count('env-1', first.usage);
    const stream = await teamA.chat.completions.create({
      model: MODEL,
      messages: hello,
      max_tokens: 16,
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamedId = '';
    for await (const chunk of stream) {
      streamedId = chunk.id;
      if (chunk.usage) count('env-1', chunk.usage);
    }
    // Read again from its record: the same reply, which must not count twice.
    const again = await fetch(`${baseURL}/chat/completions/${streamedId}/stream`, {
      headers: { authorization: 'Bearer team-a-key' },
    });
    expect(again.status).toBe(200);
    await again.text();
    const completion = await teamB.completions.create({ model: MODEL, prompt: 'Once upon a', max_tokens: 8 });
    count('env-2', completion.usage);
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it("serves vLLM's names, OpenTelemetry's GenAI histograms and the fleet's gauges with values", async () => {
    const text = await (await fetch(`${platform.baseUrl}/metrics`)).text();
    const model = `model_name="${MODEL}"`;
    expect(sample(text, 'vllm:prompt_tokens_total', model)).toBe(used['env-1'].input + used['env-2'].input);
    expect(sample(text, 'vllm:generation_tokens_total', model)).toBe(used['env-1'].output + used['env-2'].output);
    expect(sample(text, 'vllm:time_to_first_token_seconds_count', model)).toBe(3);
    expect(sample(text, 'vllm:e2e_request_latency_seconds_count', model)).toBe(3);
    expect(sample(text, 'vllm:request_queue_time_seconds_count', model)).toBe(3);
    expect(sample(text, 'vllm:inter_token_latency_seconds_count', model)).toBeGreaterThan(0);
    expect(sample(text, 'vllm:prefix_cache_queries_total', model)).toBe(used['env-1'].input + used['env-2'].input);
    expect(sample(text, 'vllm:prefix_cache_hits_total', model)).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'vllm:num_requests_running', model)).toBe(0);
    expect(sample(text, 'vllm:num_requests_waiting', model)).toBe(0);
    expect(text).toContain('vllm:time_to_first_token_seconds_bucket{le="0.001",model_name="conveyor-tiny"}');

    const chat = `gen_ai_operation_name="chat",gen_ai_provider_name="conveyor",gen_ai_request_model="${MODEL}"`;
    const textCompletion = chat.replace('"chat"', '"text_completion"');
    expect(sample(text, 'gen_ai_server_request_duration_seconds_count', `error_type="",${chat}`)).toBe(2);
    expect(sample(text, 'gen_ai_server_request_duration_seconds_count', `error_type="",${textCompletion}`)).toBe(1);
    expect(sample(text, 'gen_ai_server_time_to_first_token_seconds_count', chat)).toBe(2);
    expect(sample(text, 'gen_ai_server_time_per_output_token_seconds_count', chat)).toBeGreaterThan(0);

    expect(sample(text, 'conveyor_queue_jobs', `deployment="${MODEL}",state="completed"`)).toBe(3);
    expect(sample(text, 'conveyor_queue_jobs', `deployment="${MODEL}",state="waiting"`)).toBe(0);
    expect(sample(text, 'conveyor_pool_workers', 'pool="cpu"')).toBe(1);
    // PARALLEL=2 on the one worker, idle now.
    expect(sample(text, 'conveyor_sequences', `pool="cpu",deployment="${MODEL}",state="busy"`)).toBe(0);
    expect(sample(text, 'conveyor_sequences', `pool="cpu",deployment="${MODEL}",state="free"`)).toBe(2);
  });

  it('counts each reply once per key, in the Usage API shape, to the admin key only', async () => {
    const byKey = await settledUsage();
    expect([...byKey.keys()].sort()).toEqual(['env-1', 'env-2']);
    for (const key of ['env-1', 'env-2'] as const) {
      expect(byKey.get(key)).toMatchObject({
        object: 'organization.usage.completions.result',
        api_key_id: key,
        model: MODEL,
        batch: null,
        input_tokens: used[key].input,
        output_tokens: used[key].output,
        num_model_requests: used[key].requests,
      });
    }
    // The resumed read did not count the streamed reply again.
    expect(byKey.get('env-1')?.num_model_requests).toBe(2);

    const onlyB = await usageByKey({ api_key_ids: ['env-2'] });
    expect([...onlyB.keys()]).toEqual(['env-2']);

    const page = (await admin.admin.organization.usage.completions({
      start_time: startTime,
      bucket_width: '1d',
      group_by: ['route'] as never,
    })) as unknown as UsageCompletionsPage;
    const routes = page.data.flatMap((b) => b.results.map((r) => [r.route, r.num_model_requests]));
    expect(routes).toEqual(
      expect.arrayContaining([
        ['/v1/chat/completions', 2],
        ['/v1/completions', 1],
      ]),
    );
  });

  it('refuses the usage route to an API key, and bad queries in OpenAI error shape', async () => {
    const url = `${platform.baseUrl}/v1/organization/usage/completions?start_time=${startTime}`;
    const asTeam = await fetch(url, { headers: { authorization: 'Bearer team-a-key' } });
    expect(asTeam.status).toBe(401);
    expect(((await asTeam.json()) as { error: { type: string } }).error.type).toBe('authentication_error');
    const bad = await fetch(`${url}&bucket_width=2h`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'bucket_width' } });
  });
});
