import type { MessagesErrorBody, OpenAiErrorBody } from '@conveyor/openai';
import { TestPlatform } from './support/platform.js';
import { rawExchange, type RawAnswer } from './support/raw-http.js';

const BODY_TIMEOUT_MS = 1000;
const chat = JSON.stringify({ model: 'conveyor-tiny', messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 });

/** A POST to `path` as raw bytes: `headers` (Host among them, or not), a Content-Length, then `body`. */
const post = (path: string, headers: string[], body: string, declared = Buffer.byteLength(body)): string =>
  `POST ${path} HTTP/1.1\r\n${[...headers, `Content-Length: ${declared}`, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`;

const JSON_TYPE = 'Content-Type: application/json';
const HOST = 'Host: localhost';

/**
 * Every way a request is refused before its route runs (Fastify's hooks, its body parsing, the socket
 * deadline), with the status and OpenAI's code it is answered with. Each is raised on each route below.
 */
const REFUSALS: Array<[name: string, request: (path: string) => string, status: number, code: string]> = [
  ['HTTP/1.1 without a Host', (path) => post(path, [JSON_TYPE], chat), 400, 'malformed_request'],
  ['a Host not allowed', (path) => post(path, ['Host: rebound.example', JSON_TYPE], chat), 403, 'host_not_allowed'],
  [
    'a multipart body',
    (path) => post(path, [HOST, 'Content-Type: multipart/form-data; boundary=x'], chat),
    415,
    'unsupported_media_type',
  ],
  ['a text/plain body', (path) => post(path, [HOST, 'Content-Type: text/plain'], chat), 415, 'unsupported_media_type'],
  ['malformed JSON', (path) => post(path, [HOST, JSON_TYPE], '{"model":'), 400, 'invalid_json'],
  [
    'a body over the limit',
    (path) => post(path, [HOST, JSON_TYPE], '{"model":', 1024 * 1024 * 1024),
    413,
    'request_too_large',
  ],
  ['a body that stalls', (path) => post(path, [HOST, JSON_TYPE], '{"model":', 1000), 408, 'request_timeout'],
];

/** The routes, plain and hosted, and the error shape each speaks. */
const ROUTES: Array<[path: string, dialect: 'anthropic' | 'openai']> = [
  ['/v1/messages', 'anthropic'],
  ['/v1/messages/count_tokens', 'anthropic'],
  ['/v1/messages/batches', 'anthropic'],
  ['/acme/chat/v1/messages', 'anthropic'],
  ['/acme/chat/v1/messages/count_tokens', 'anthropic'],
  ['/v1/chat/completions', 'openai'],
  ['/v1/responses', 'openai'],
  ['/acme/chat/v1/chat/completions', 'openai'],
  ['/acme/chat/v1/tokenize', 'openai'],
  ['/environments/production/predict', 'openai'],
];

/** Anthropic's error type for each status refused here, as its clients read it. */
const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  403: 'permission_error',
  408: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
};

function expectShape(answer: RawAnswer, dialect: 'anthropic' | 'openai', status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  if (dialect === 'anthropic') {
    const body = JSON.parse(answer.body) as MessagesErrorBody;
    expect(body).toEqual({ type: 'error', error: { type: ANTHROPIC_TYPES[status], message: expect.any(String) } });
    expect(body.error.message.length).toBeGreaterThan(10);
  } else {
    const body = JSON.parse(answer.body) as OpenAiErrorBody;
    expect(body).toEqual({ error: { message: expect.any(String), type: expect.any(String), param: null, code } });
  }
}

describe('requests refused before their route runs answer in the dialect of the route they were sent to', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    // A Message Batch's body, read as a stream, has the uploads' deadline: both the same here.
    const deadline = String(BODY_TIMEOUT_MS);
    platform = await TestPlatform.start({
      workers: 0,
      env: { REQUEST_BODY_TIMEOUT_MS: deadline, UPLOAD_TIMEOUT_MS: deadline },
    });
  });

  afterAll(async () => {
    await platform?.stop();
  });

  describe.each(ROUTES)('POST %s (%s)', (path, dialect) => {
    it.each(REFUSALS)('refuses %s', async (_name, request, status, code) => {
      expectShape(await rawExchange(platform.port, [request(path)]), dialect, status, code);
    });
  });

  it("answers a Messages path that reaches no route (an empty org or app, a batch route misspelt) in Anthropic's shape", async () => {
    for (const path of [
      '//chat/v1/messages',
      '/acme//v1/messages',
      '//chat/v1/messages/count_tokens',
      '/v1/messages/batchez',
    ]) {
      const answer = await rawExchange(platform.port, [post(path, [HOST, JSON_TYPE], chat)]);
      expect({ path, status: answer.status }).toEqual({ path, status: 404 });
      expect(JSON.parse(answer.body)).toEqual({
        type: 'error',
        error: { type: 'not_found_error', message: expect.any(String) },
      });
    }
    // Any other unknown path keeps OpenAI's shape.
    const other = await rawExchange(platform.port, [post('//chat/v1/chat/completions', [HOST, JSON_TYPE], chat)]);
    expect(JSON.parse(other.body)).toMatchObject({ error: { code: 'unknown_url' } });
  });
});
