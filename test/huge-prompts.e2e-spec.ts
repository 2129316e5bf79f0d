import { Queue } from 'bullmq';
import type { ChatCompletion, OpenAiErrorBody } from '@conveyor/openai';
import { GENERATE_JOB, deploymentQueueName, type GenerationJobData } from '@conveyor/queue';
import { replyEvents, EVENTUALLY_MS, waitFor } from './support/jobs.js';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
const HUGE = 'lorem ipsum '.repeat(1_250_000); // 15 MB: under the 16 MB body limit

const chat = (platform: TestPlatform, content: string, maxTokens = 3) =>
  fetch(`${platform.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: 'user', content }],
      max_tokens: maxTokens,
      temperature: 0,
    }),
  });

describe('prompts that cannot fit the context are refused before anyone tokenizes them', () => {
  let platform: TestPlatform;
  let queue: Queue;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 1, env: { CONTEXT_SIZE: '4096', PARALLEL: '2' } });
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
  });

  afterAll(async () => {
    await queue?.close();
    await platform?.stop();
  });

  it('the API answers a 15 MB prompt with 400 context_length_exceeded at once, and queues nothing', async () => {
    const res = await chat(platform, HUGE);
    expect(res.status).toBe(400);
    const body = await readJson<OpenAiErrorBody>(res);
    expect(body.error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
    expect(body.error.message).toMatch(/15000000 characters/);
    expect(Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('a worker refuses a huge job that reached its queue some other way without tokenizing it; a small request beside it is not held up', async () => {
    const requestId = '00000000-0000-4000-8000-00000000f00d';
    const job: GenerationJobData = {
      requestId,
      deployment: MODEL,
      messages: [{ role: 'user', content: HUGE }],
      sampling: { temperature: 0 },
      maxTokens: 3,
      stop: [],
      enqueuedAt: Date.now(),
      // As the API queues a job: its reply goes to an API replica's inbox (no replica reads this one).
      replyTo: 'no-such-replica',
    };
    const small = chat(platform, 'hello', 3);
    await queue.add(GENERATE_JOB, job, { jobId: requestId, attempts: 2 });
    const res = await small;
    expect(res.status).toBe(200);
    expect((await readJson<ChatCompletion>(res)).usage.completion_tokens).toBe(3);
    const error = await waitFor(
      async () => (await replyEvents(REDIS_URL, platform.prefix, requestId)).find((e) => e.type === 'error'),
      EVENTUALLY_MS,
      'the huge job to be refused',
    );
    expect(error).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    const failed = await waitFor(async () => (await queue.getFailed())[0], EVENTUALLY_MS, 'the job to fail');
    expect(failed.attemptsMade).toBe(1);
  });
});
