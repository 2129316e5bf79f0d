import { rmSync } from 'node:fs';
import { Queue } from 'bullmq';
import type { ChatCompletion, ModelList, OpenAiErrorBody } from '@conveyor/openai';
import { deploymentQueueName } from '@conveyor/queue';
import { readJson } from './support/json.js';
import { REDIS_URL, TestPlatform } from './support/platform.js';
import { rawExchange, rawRequest, type RawAnswer } from './support/raw-http.js';

const MODEL = 'conveyor-tiny';
const BODY_TIMEOUT_MS = 1000;
const UPLOAD_TIMEOUT_MS = 3000;
const DATA_DIR = `/tmp/conveyor-test-http-edge-${process.pid}`;
const chat = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 });

/** An answer written by the server in OpenAI's error shape, with this status and code. */
function expectOpenAiError(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as OpenAiErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toEqual({ message: expect.any(String), type: expect.any(String), param: null, code });
  expect(body.error.message.length).toBeGreaterThan(10);
}

describe('the HTTP edge: body types, host names, deadlines, and requests refused before any route', () => {
  let platform: TestPlatform;
  let queue: Queue;
  const post = (path: string, body: RequestInit['body'], headers: Record<string, string> = {}) =>
    fetch(`${platform.baseUrl}${path}`, { method: 'POST', headers, body });
  const queued = async () => Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0);

  beforeAll(async () => {
    platform = await TestPlatform.start({
      env: {
        REQUEST_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
        UPLOAD_TIMEOUT_MS: String(UPLOAD_TIMEOUT_MS),
        DATA_DIR,
      },
    });
    queue = new Queue(deploymentQueueName(MODEL), { connection: { url: REDIS_URL }, prefix: platform.prefix });
  });

  afterAll(async () => {
    await queue?.close();
    await platform?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  describe('body types: JSON only, so a web page cannot post to a local server without a preflight', () => {
    it.each([
      ['text/plain', 'text/plain;charset=UTF-8'],
      ['form-encoded', 'application/x-www-form-urlencoded'],
      ['multipart', 'multipart/form-data; boundary=x'],
    ])('refuses JSON sent as %s with 415, queueing nothing', async (_name, type) => {
      const before = await queued();
      const res = await post('/v1/chat/completions', chat, { 'content-type': type });
      expect(res.status).toBe(415);
      expect((await readJson<OpenAiErrorBody>(res)).error).toMatchObject({
        type: 'invalid_request_error',
        code: 'unsupported_media_type',
      });
      expect(await queued()).toBe(before);
    });

    it('accepts JSON with no Content-Type at all, and application/json with any charset', async () => {
      // A byte body: fetch adds no Content-Type of its own, as it does (text/plain) for a string.
      const untyped = await post('/v1/chat/completions', Buffer.from(chat));
      expect(untyped.status).toBe(200);
      expect((await readJson<ChatCompletion>(untyped)).usage.completion_tokens).toBe(2);
      const latin1 = await post('/v1/chat/completions', chat, { 'content-type': 'Application/JSON; charset=latin1' });
      expect(latin1.status).toBe(200);
    });

    it('takes an empty body of any type as no body, as the Python client sends on bodyless POSTs', async () => {
      const res = await post('/v1/batches/batch_000000000000000000000000/cancel', '', { 'content-type': 'text/plain' });
      expect(res.status).toBe(404);
      expect((await readJson<OpenAiErrorBody>(res)).error.code).toBe('batch_not_found');
    });
  });

  describe('host names: another Host gets 403, so DNS rebinding cannot reach the server', () => {
    it('refuses a request for another host with 403 before any route runs, queueing nothing', async () => {
      const before = await queued();
      for (const head of [
        'POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example:8000\r\nContent-Type: application/json',
        'GET /v1/models HTTP/1.1\r\nHost: evil.example',
        'GET /no/such/route HTTP/1.1\r\nHost: localhost.evil.example',
        `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1.nip.io:${platform.port}`,
        // An absolute-form target names the host in place of the Host header: its authority is checked.
        `GET http://evil.example/metrics HTTP/1.1\r\nHost: 127.0.0.1:${platform.port}`,
        `GET http://evil.example/openapi.json HTTP/1.1\r\nHost: 127.0.0.1:${platform.port}`,
        `GET http://evil.example/docs HTTP/1.1\r\nHost: 127.0.0.1:${platform.port}`,
      ]) {
        const answer = await rawExchange(platform.port, [rawRequest(head, head.startsWith('POST') ? chat : '')]);
        expectOpenAiError(answer, 403, 'host_not_allowed');
        expect((JSON.parse(answer.body) as OpenAiErrorBody).error.type).toBe('permission_error');
      }
      expect(await queued()).toBe(before);
    });

    it('refuses two Host headers with 400, whichever comes first: a proxy may have read the other', async () => {
      for (const head of [
        `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${platform.port}\r\nHost: evil.example`,
        `GET /metrics HTTP/1.1\r\nHost: evil.example\r\nHost: 127.0.0.1:${platform.port}`,
      ]) {
        const answer = await rawExchange(platform.port, [rawRequest(head)]);
        expectOpenAiError(answer, 400, 'malformed_request');
      }
    });

    it('closes the connection of a refused host at once, kept alive or with its body still to come', async () => {
      // Kept-alive requests (no Connection: close): open after the 403, each would hold a socket for
      // Fastify's keep-alive time (72 s), and a stalled body until its deadline.
      const heads = [
        'GET /v1/models HTTP/1.1\r\nHost: evil.example\r\n\r\n',
        `POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(chat)}\r\n\r\n${chat}`,
        `POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n` +
          `Content-Length: 100000\r\n\r\n{"model":`,
      ];
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => rawExchange(platform.port, [heads[i % heads.length]!])),
      );
      for (const answer of answers) {
        expectOpenAiError(answer, 403, 'host_not_allowed');
        expect(answer.headers.connection).toBe('close');
        // Closed by the server well inside the exchange's 10 s wait, far short of a keep-alive.
        expect(answer.closedAfterMs).not.toBeNull();
      }
    });

    it('answers health and readiness probes whatever their Host, as load balancers and kubelets send the pod IP', async () => {
      for (const path of ['/health', '/ready']) {
        const answer = await rawExchange(platform.port, [rawRequest(`GET ${path} HTTP/1.1\r\nHost: 10.1.2.3:8000`)]);
        expect(answer.status).toBe(200);
      }
    });

    it('answers to localhost, 127.0.0.1 and [::1] on any port', async () => {
      for (const host of ['localhost', 'LOCALHOST:1234', '127.0.0.1:80', '[::1]:8000']) {
        const answer = await rawExchange(platform.port, [rawRequest(`GET /v1/models HTTP/1.1\r\nHost: ${host}`)]);
        expect(answer.status).toBe(200);
        expect((JSON.parse(answer.body) as ModelList).data[0].id).toBe(MODEL);
      }
    });
  });

  describe('deadlines: a client that stops sending is cut off', () => {
    const stalledPost = (declared: number, sent: string) =>
      `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${declared}\r\n\r\n${sent}`;

    // Each close is waited for (rawExchange gives up after 10 s, far past these timeouts) and must not come
    // before its timeout; how soon after it comes is not asserted, as a loaded machine's timers are late.
    it('closes 20 sockets that sent headers and part of a body, at REQUEST_BODY_TIMEOUT_MS, with a 408', async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => rawExchange(platform.port, [stalledPost(1000, '{"model":')])),
      );
      for (const answer of answers) {
        expect(answer.closedAfterMs).not.toBeNull();
        expect(answer.closedAfterMs!).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
        expectOpenAiError(answer, 408, 'request_timeout');
      }
      expect((await fetch(`${platform.baseUrl}/health`)).status).toBe(200);
    });

    it('leaves a reply alone that takes longer than the deadline, once its request is in', async () => {
      const started = Date.now();
      const res = await post(
        '/v1/chat/completions',
        JSON.stringify({
          model: MODEL,
          messages: [{ role: 'user', content: 'hello' }],
          // Several seconds of tokens on the tiny model, however fast the machine.
          max_tokens: 2000,
          ignore_eos: true,
          stream: true,
        }),
        { 'content-type': 'application/json' },
      );
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(Date.now() - started).toBeGreaterThan(BODY_TIMEOUT_MS);
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    });

    it('closes a socket that stops in the middle of its headers', async () => {
      const answer = await rawExchange(platform.port, ['POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n']);
      // Closed (Node checks headers on its own timer, once a second), not left open.
      expect(answer.closedAfterMs).not.toBeNull();
      expectOpenAiError(answer, 408, 'request_timeout');
    });

    /** An upload of a two-line file as raw request pieces: the head, then the body in five parts. */
    const upload = (): string[] => {
      const boundary = 'conveyor-test';
      const line = JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: {} }) + '\n';
      const body = [
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`,
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="in.jsonl"\r\n\r\n`,
        line,
        line,
        `\r\n--${boundary}--\r\n`,
      ];
      const length = body.reduce((n, p) => n + Buffer.byteLength(p), 0);
      const head =
        `POST /v1/files HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
        `Content-Length: ${length}\r\nConnection: close\r\n\r\n`;
      return [head, ...body];
    };

    it('lets an upload take longer than REQUEST_BODY_TIMEOUT_MS while it keeps sending', async () => {
      const answer = await rawExchange(platform.port, upload(), { gapMs: 400 });
      expect(answer.status).toBe(200);
      expect(answer.closedAfterMs!).toBeGreaterThan(BODY_TIMEOUT_MS + 500);
      expect(JSON.parse(answer.body)).toMatchObject({ object: 'file', purpose: 'batch' });
    });

    it('closes an upload that stalls, at UPLOAD_TIMEOUT_MS', async () => {
      const answer = await rawExchange(platform.port, upload().slice(0, 3));
      expect(answer.closedAfterMs).not.toBeNull();
      expect(answer.closedAfterMs!).toBeGreaterThanOrEqual(UPLOAD_TIMEOUT_MS - 50);
      expectOpenAiError(answer, 408, 'request_timeout');
    });
  });

  describe("requests Node's parser or Fastify's router refuse before any route, in OpenAI's shape", () => {
    it.each([
      ['a malformed request line', 'GARBAGE\r\n\r\n', 400, 'malformed_request'],
      [
        'a header line with no colon',
        'GET /v1/models HTTP/1.1\r\nHost: localhost\r\nno colon\r\n\r\n',
        400,
        'malformed_request',
      ],
      [
        'a URL over the header limit',
        `GET /v1/models/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
        431,
        'headers_too_large',
      ],
      [
        'headers over the limit',
        `GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        431,
        'headers_too_large',
      ],
      [
        'a URL segment too long for the router',
        rawRequest(`GET /${'o'.repeat(200)}/app/v1/models HTTP/1.1\r\nHost: localhost`),
        414,
        'url_too_long',
      ],
      ['a malformed %-escape', rawRequest('GET /v1/models/%zz HTTP/1.1\r\nHost: localhost'), 400, 'invalid_url'],
      ['HTTP/1.1 without a Host', rawRequest('GET /v1/models HTTP/1.1'), 400, 'malformed_request'],
    ])('answers %s', async (_name, payload, status, code) => {
      expectOpenAiError(await rawExchange(platform.port, [payload]), status, code);
    });
  });
});

describe('ALLOWED_HOSTS', () => {
  const models = (port: number, host: string) =>
    rawExchange(port, [rawRequest(`GET /v1/models HTTP/1.1\r\nHost: ${host}`)]);

  it('replaces the default names with the ones it lists, port ignored', async () => {
    const platform = await TestPlatform.start({ workers: 0, env: { ALLOWED_HOSTS: 'api.example.com, 10.0.0.5' } });
    try {
      expect((await models(platform.port, 'API.example.com:443')).status).toBe(200);
      expect((await models(platform.port, '10.0.0.5')).status).toBe(200);
      expectOpenAiError(await models(platform.port, 'localhost'), 403, 'host_not_allowed');
    } finally {
      await platform.stop();
    }
  });

  it('accepts any Host when set to *', async () => {
    const platform = await TestPlatform.start({ workers: 0, env: { ALLOWED_HOSTS: '*' } });
    try {
      for (const host of ['evil.example', 'localhost', '203.0.113.9:8000']) {
        expect((await models(platform.port, host)).status).toBe(200);
      }
    } finally {
      await platform.stop();
    }
  });
});
