import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ImageRef } from '@conveyor/queue';
import { EngineInputError, type GenerateRequest, type OutputPiece } from '../core/generation-engine.js';
import { ImageSource } from '../core/image-source.port.js';
import { OpenAiUpstreamEngine } from './openai-upstream.engine.js';
import { UpstreamError } from './upstream-error.js';

type Handler = (body: Record<string, unknown>, res: ServerResponse, req: IncomingMessage) => void;

/** Writes SSE events, one chunk each, then [DONE]. */
const stream = (res: ServerResponse, chunks: object[], done = true) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  if (done) res.end('data: [DONE]\n\n');
  else res.end();
};

// The engine against a scripted OpenAI-compatible server on loopback: what it sends, and how it reads answers.
describe('OpenAiUpstreamEngine against a scripted upstream', () => {
  let server: Server;
  let url: string;
  let handler: Handler;
  const received: Array<{ path: string; auth: string | undefined; body: Record<string, unknown> }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw) as Record<string, unknown>;
        received.push({ path: req.url ?? '', auth: req.headers.authorization, body });
        handler(body, res, req);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const request: GenerateRequest = {
    messages: [{ role: 'user', content: 'hi' }],
    sampling: { temperature: 0 },
    stop: [],
  };
  const run = async (engine: OpenAiUpstreamEngine, r: GenerateRequest = request) => {
    const pieces: OutputPiece[] = [];
    const events: string[] = [];
    const result = await engine.generate(r, {
      onStart: (n) => events.push(`start ${n}`),
      onOutput: (p) => {
        events.push('output');
        pieces.push(p);
      },
    });
    return { result, pieces, events };
  };

  it('streams a chat: pieces as they come, the finish reason, and usage with the cached tokens', async () => {
    handler = (_body, res) =>
      stream(res, [
        { choices: [{ index: 0, delta: { role: 'assistant', content: null } }] },
        { choices: [{ index: 0, delta: { reasoning_content: 'so' } }] },
        { choices: [{ index: 0, delta: { content: 'Hel' } }] },
        { choices: [{ index: 0, delta: { content: 'lo' } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } } },
      ]);
    const engine = new OpenAiUpstreamEngine({ url, apiKey: 'sk-test', model: 'qwen' });
    const { result, pieces, events } = await run(engine);
    expect(received.at(-1)).toMatchObject({
      path: '/v1/chat/completions',
      auth: 'Bearer sk-test',
      body: { model: 'qwen', stream: true, stream_options: { include_usage: true } },
    });
    expect(events[0]).toBe('start 0');
    expect(pieces).toEqual([
      { choice: 0, reasoning: 'so', text: '', tokens: 1 },
      { choice: 0, text: 'Hel', tokens: 2 },
      { choice: 0, text: 'lo', tokens: 3 },
    ]);
    expect(result).toEqual({
      finishReason: 'stop',
      finishReasons: ['stop'],
      usage: { promptTokens: 9, completionTokens: 3, cachedTokens: 4 },
      aborted: false,
    });
    await engine.dispose();
  });

  it('names the stop string that ended a choice where the upstream says which, and only one the request asked for', async () => {
    const finish =
      (choice: object, extra: object = {}) =>
      (_body: unknown, res: ServerResponse) =>
        stream(res, [
          { choices: [{ index: 0, delta: { content: 'Hi' } }] },
          { choices: [{ index: 0, delta: {}, finish_reason: 'stop', ...choice }], ...extra },
        ]);
    const engine = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm' });
    const stopped = { ...request, stop: ['END', '\n\n'] };
    // vLLM: the stop string, in the last chunk's choice.
    handler = finish({ stop_reason: '\n\n' });
    expect((await run(engine, stopped)).result.stopSequences).toEqual(['\n\n']);
    // SGLang: under another name.
    handler = finish({ matched_stop: 'END' });
    expect((await run(engine, stopped)).result.stopSequences).toEqual(['END']);
    // A string the request did not ask for, a stop token's id, or no word at all (OpenAI's API): none named.
    for (const choice of [{ stop_reason: '<|im_end|>' }, { stop_reason: 2 }, {}]) {
      handler = finish(choice);
      const { result } = await run(engine, stopped);
      expect(result.finishReason).toBe('stop');
      expect(result.stopSequences).toBeUndefined();
    }
    // llama.cpp's server, asked for its debugging field on the chunk.
    handler = finish({}, { __verbose: { stop_type: 'word', stopping_word: 'END' } });
    const server = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm', dialect: 'llama-server' });
    expect((await run(server, stopped)).result.stopSequences).toEqual(['END']);
    expect(received.at(-1)?.body).toMatchObject({ verbose: true, response_fields: ['stop_type', 'stopping_word'] });
    await engine.dispose();
    await server.dispose();
  });

  it('streams tool call pieces and raw-prompt completions', async () => {
    handler = (_body, res) =>
      stream(res, [
        {
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] },
            },
          ],
        },
        { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] } }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ]);
    const engine = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm' });
    const { result, pieces } = await run(engine, { ...request, tools: [{ name: 'f' }] });
    expect(pieces.map((p) => p.toolCall)).toEqual([
      { index: 0, id: 'c1', name: 'f', arguments: '' },
      { index: 0, arguments: '{}' },
    ]);
    // Without usage from the upstream, the chunks it streamed are counted.
    expect(result).toMatchObject({ finishReason: 'tool_calls', usage: { promptTokens: 0, completionTokens: 2 } });
    expect(received.at(-1)?.auth).toBeUndefined();

    handler = (_body, res) =>
      stream(res, [
        { choices: [{ index: 1, text: 'b', finish_reason: 'length' }] },
        { choices: [{ index: 0, text: 'a', finish_reason: 'stop' }] },
      ]);
    const legacy = await run(engine, { ...request, messages: [], prompts: ['x', 'y'] });
    expect(received.at(-1)).toMatchObject({ path: '/v1/completions', body: { prompt: ['x', 'y'] } });
    expect(legacy.result.finishReasons).toEqual(['stop', 'length']);
    await engine.dispose();
  });

  it('streams several tool calls of one reply by their index, and numbers those an upstream leaves unnumbered', async () => {
    const piece = (call: object) => ({ choices: [{ index: 0, delta: { tool_calls: [call] } }] });
    handler = (_body, res) =>
      stream(res, [
        piece({ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":' } }),
        piece({ index: 1, id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } }),
        piece({ index: 0, function: { arguments: '1}' } }),
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ]);
    const engine = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm', dialect: 'llama-server' });
    const tools = { ...request, tools: [{ name: 'f' }, { name: 'g' }] };
    const numbered = await run(engine, tools);
    expect(numbered.pieces.map((p) => p.toolCall)).toEqual([
      { index: 0, id: 'c1', name: 'f', arguments: '{"a":' },
      { index: 1, id: 'c2', name: 'g', arguments: '{}' },
      { index: 0, arguments: '1}' },
    ]);
    expect(numbered.result.finishReason).toBe('tool_calls');
    // llama.cpp's server makes one call unless asked for more.
    expect(received.at(-1)?.body).toMatchObject({ parallel_tool_calls: true });
    await run(engine, { ...tools, parallelToolCalls: false });
    expect(received.at(-1)?.body).toMatchObject({ parallel_tool_calls: false });

    // Whole calls, one per chunk, without index: each id is a call of its own.
    handler = (_body, res) =>
      stream(res, [
        piece({ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }),
        piece({ id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } }),
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      ]);
    const unnumbered = await run(engine, tools);
    expect(unnumbered.pieces.map((p) => [p.toolCall?.index, p.toolCall?.id])).toEqual([
      [0, 'c1'],
      [1, 'c2'],
    ]);
    await engine.dispose();
  });

  it('sends images as data: URIs read through the image source, each once', async () => {
    const ref: ImageRef = { sha256: 'cd'.repeat(32), mime: 'image/png', bytes: 3, width: 1, height: 1 };
    const reads: string[] = [];
    const images = new (class extends ImageSource {
      async read(r: ImageRef): Promise<Buffer> {
        reads.push(r.sha256);
        return Buffer.from([1, 2, 3]);
      }
    })();
    handler = (_body, res) =>
      stream(res, [{ choices: [{ index: 0, delta: { content: 'a cat' }, finish_reason: 'stop' }] }]);
    const engine = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm', images });
    const parts = [
      { type: 'image' as const, image: ref },
      { type: 'image' as const, image: ref },
    ];
    await run(engine, { ...request, messages: [{ role: 'user', content: '', parts }] });
    expect(reads).toEqual([ref.sha256]);
    expect(received.at(-1)?.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AQID' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AQID' } },
        ],
      },
    ]);
    // A deployment without an image source refuses images before anything is sent.
    const blind = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm' });
    await expect(run(blind, { ...request, messages: [{ role: 'user', content: '', parts }] })).rejects.toBeInstanceOf(
      EngineInputError,
    );
    await Promise.all([engine.dispose(), blind.dispose()]);
  });

  it("turns the upstream's 4xx into an input error, and 5xx, broken streams and refused connections into retryable failures", async () => {
    const engine = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm' });
    handler = (_body, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: 'temperature is too high', param: 'temperature', code: 'invalid_value' } }),
      );
    };
    await expect(run(engine)).rejects.toMatchObject({
      name: 'EngineInputError',
      message: 'temperature is too high',
      code: 'invalid_value',
      param: 'temperature',
    });

    handler = (_body, res) => {
      res.writeHead(503);
      res.end('overloaded');
    };
    await expect(run(engine)).rejects.toBeInstanceOf(UpstreamError);

    handler = (_body, res) => stream(res, [{ choices: [{ index: 0, delta: { content: 'cut' } }] }], false);
    await expect(run(engine)).rejects.toThrow('ended its stream before choice 0 finished');

    handler = (_body, res) => res.socket?.destroy();
    await expect(run(engine)).rejects.toBeInstanceOf(UpstreamError);

    const nowhere = new OpenAiUpstreamEngine({ url: 'http://127.0.0.1:1/v1', apiKey: null, model: 'm' });
    await expect(run(nowhere)).rejects.toThrow(/ECONNREFUSED/);
    await Promise.all([engine.dispose(), nowhere.dispose()]);
  });

  it('aborts the upstream request when the signal fires, and reports the reply as aborted', async () => {
    let closed!: () => void;
    const clientLeft = new Promise<void>((r) => (closed = r));
    handler = (_body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'one' } }] })}\n\n`);
      res.on('close', closed);
    };
    const engine = new OpenAiUpstreamEngine({ url, apiKey: null, model: 'm' });
    const controller = new AbortController();
    const result = await engine.generate(
      { ...request, signal: controller.signal },
      { onStart: () => undefined, onOutput: () => controller.abort() },
    );
    expect(result).toMatchObject({ aborted: true, usage: { completionTokens: 1 } });
    await clientLeft;
    await engine.dispose();
  });
});
