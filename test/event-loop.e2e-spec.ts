import { TestPlatform } from './support/platform.js';

const MODEL = 'conveyor-tiny';
/** Far above any stall a request should cause, far below the seconds the large requests below once took. */
const HEALTH_BOUND_MS = 1500;

/** A JSON Schema object with `n` string properties. */
const wideSchema = (n: number) => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`field_${i}`, { type: 'string' }])),
});

/**
 * Large requests are worked through in slices, so the API's event loop stays free: its /health answers
 * while it checks them, and a liveness probe does not kill the replica for a request it was serving.
 */
describe('the API answers /health while it works through a large request', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    // No worker: nothing here needs one, the requests are checked (and refused or stored) by the API.
    platform = await TestPlatform.start({ workers: 0 });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  /** The longest the event loop was held since the last scrape, as the API's own metric reports it. */
  const loopLagMaxMs = async (): Promise<number> => {
    const text = await (await fetch(`${platform.baseUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('conveyor_api_nodejs_eventloop_lag_max_seconds '));
    return Math.round(Number(line!.split(' ')[1]) * 1000);
  };

  /**
   * Polls /health, one request at a time, until `work` settles: how long each took. `body` is serialized
   * before polling starts, so the test's own JSON work does not count.
   */
  async function healthDuring(
    path: string,
    body: object,
  ): Promise<{ status: number; health: number[]; lagMs: number }> {
    const payload = JSON.stringify(body);
    await loopLagMaxMs();
    let done = false;
    const health: number[] = [];
    const polling = (async () => {
      while (!done) {
        const t0 = performance.now();
        const res = await fetch(`${platform.baseUrl}/health`);
        await res.text();
        expect(res.status).toBe(200);
        health.push(Math.round(performance.now() - t0));
      }
    })();
    const res = await fetch(`${platform.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: payload,
    });
    await res.text();
    done = true;
    await polling;
    return { status: res.status, health, lagMs: await loopLagMaxMs() };
  }

  it('while it checks and stores a Message Batch of 50,000 requests', async () => {
    const requests = Array.from({ length: 50_000 }, (_, i) => ({
      custom_id: `r-${i}`,
      params: { model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: `Request ${i}` }] },
    }));
    const { status, health, lagMs } = await healthDuring('/v1/messages/batches', { requests });
    console.log(
      `50,000-request Message Batch: event loop held ${lagMs} ms at most; slowest /health ${Math.max(...health)} ms of ${health.length}`,
    );
    expect(status).toBe(200);
    expect(health.length).toBeGreaterThan(1);
    expect(Math.max(...health)).toBeLessThan(HEALTH_BOUND_MS);
  }, 120_000);

  // 20,000 as first reported; 80,000 too, as the stall grew with the square of the count.
  it.each([
    ['a response format', 20_000, '/v1/chat/completions'],
    ['a response format', 80_000, '/v1/chat/completions'],
    ['a Messages tool', 80_000, '/v1/messages'],
  ])(
    'while it checks %s whose JSON Schema has %d properties',
    async (_where, properties, path) => {
      const schema = wideSchema(properties);
      const body =
        path === '/v1/messages'
          ? {
              model: MODEL,
              max_tokens: 64,
              messages: [{ role: 'user', content: 'Hi' }],
              tools: [{ name: 'form', input_schema: schema }],
            }
          : {
              model: MODEL,
              max_tokens: 64,
              messages: [{ role: 'user', content: 'Fill the form.' }],
              response_format: { type: 'json_schema', json_schema: { name: 'form', schema } },
            };
      const { status, health, lagMs } = await healthDuring(path, body);
      console.log(
        `${properties}-property schema on ${path}: event loop held ${lagMs} ms at most; slowest /health ${Math.max(...health)} ms of ${health.length}`,
      );
      // Too large to enforce (or to fit the context): refused, as it was, only without holding the API meanwhile.
      expect(status).toBe(400);
      expect(Math.max(...health)).toBeLessThan(HEALTH_BOUND_MS);
    },
    120_000,
  );
});
