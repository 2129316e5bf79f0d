import type { ChatCompletion } from '@conveyor/openai';
import { writeDeploymentsFile } from './support/deployments-file.js';
import { readJson } from './support/json.js';
import { TestPlatform, type ManagedProcess } from './support/platform.js';

/**
 * One on-demand deployment of one sequence whose replies take a second and a half, on two workers whose
 * budgets each hold it: the first request loads it on one worker only; a burst the one copy cannot keep
 * up with has the other worker load a second copy and take part of it. A request waiting while the model
 * loads (the first one) is not a backlog: it loads no copy.
 */
const config = writeDeploymentsFile({
  deployments: [
    {
      id: 'busy',
      engine: 'simulated',
      simulated: { ttftMs: 1500, tpotMs: 5 },
      load: 'on-demand',
      memoryMb: 4,
      parallel: 1,
    },
  ],
});

describe('a second copy of an on-demand model whose workers are busy', () => {
  let platform: TestPlatform;
  let workers: ManagedProcess[];

  const chat = (content: string) =>
    fetch(`${platform.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'busy', messages: [{ role: 'user', content }], max_tokens: 2 }),
    });
  /** Lines of a worker's log that match `pattern`. */
  const logged = (worker: ManagedProcess, pattern: RegExp): number =>
    worker.output
      .join('')
      .split('\n')
      .filter((line) => pattern.test(line)).length;
  const loads = () => workers.map((w) => logged(w, /Loaded \\?"busy\\?" on demand/));

  beforeAll(async () => {
    platform = await TestPlatform.start({
      workers: 0,
      env: { CONVEYOR_CONFIG: config, HEARTBEAT_MS: '300', QUEUE_TIMEOUT_MS: '60000' },
    });
    const env = { WORKER_MEMORY_BUDGET_MB: '5', MODEL_DEMAND_POLL_MS: '100' };
    workers = await Promise.all([platform.startWorker(env), platform.startWorker(env)]);
  });

  afterAll(async () => {
    await platform?.stop();
  });

  it('loads a cold model on one worker for one request', async () => {
    const res = await chat('one');
    expect(res.status).toBe(200);
    expect((await readJson<ChatCompletion>(res)).model).toBe('busy');
    // Give the other worker a few looks: the model is served and nothing waits, so it loads nothing.
    await new Promise((r) => setTimeout(r, 500));
    expect(loads().sort()).toEqual([0, 1]);
  });

  it('loads a second copy when a burst waits on the busy one, and both take part of it', async () => {
    const before = workers.map((w) => logged(w, /job started/));
    // Nine seconds of work on one sequence: the copy, made once work has waited 2 s, takes part of it.
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => chat(`burst ${i}`)));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(loads()).toEqual([1, 1]);
    expect(workers.filter((w) => logged(w, /a copy beside busy workers/) === 1)).toHaveLength(1);
    const took = workers.map((w, i) => logged(w, /job started/) - before[i]!);
    expect(took.reduce((a, b) => a + b, 0)).toBe(6);
    expect(Math.min(...took)).toBeGreaterThan(0);
  });
});
