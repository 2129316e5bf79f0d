// A keep-alive HTTP client and an SSE chat-completions reader, used the same way against every server.
import { Agent, request } from 'node:http';
import { now } from './stats.mjs';

const REQUEST_TIMEOUT_MS = 180_000;

/**
 * @typedef {object} CallOptions
 * @property {string} [method]
 * @property {unknown} [body] sent as JSON
 * @property {Record<string, string>} [headers]
 * @property {(chunk: string) => void} [onChunk] takes a 200 reply's body piece by piece; throwing aborts the request
 */

/**
 * What `streamChat` measured of one reply.
 * @typedef {object} StreamResult
 * @property {number} ttft ms to the first content text (to the end, for a reply without any)
 * @property {number} tokens completion tokens, as the usage chunk reports them
 * @property {number} promptTokens
 * @property {string | null} finishReason
 * @property {number} start `now()` when the request was sent
 * @property {number} end `now()` when the stream ended
 * @property {string} content the reply's text
 * @property {number[]} contentTimes `now()` at each event that carried content text, in order
 * @property {number | null} cachedTokens `usage.prompt_tokens_details.cached_tokens`: prompt tokens the server reused
 * @property {LlamaTimings | null} timings llama-server's own figures for the reply, outside OpenAI's fields
 */

/**
 * The part of llama-server's `timings` the benches read: prompt tokens taken from its cache and evaluated.
 * @typedef {{ cache_n?: number, prompt_n?: number, prompt_ms?: number, predicted_n?: number }} LlamaTimings
 */

/**
 * @typedef {object} StreamOptions
 * @property {(events: number) => void} [onContent] called after each event with content text, with how many so far
 */

/**
 * The parts of a chat.completion.chunk event that the reader looks at.
 * @typedef {object} ChatChunk
 * @property {unknown} [error]
 * @property {{ delta?: { content?: string | null }, finish_reason?: string | null }[]} [choices]
 * @property {{ completion_tokens: number, prompt_tokens: number, prompt_tokens_details?: { cached_tokens?: number } } | null} [usage]
 * @property {LlamaTimings} [timings] llama-server's, on its last chunk
 */

export class HttpClient {
  /** @param {{ keepAlive?: boolean }} [options] */
  constructor({ keepAlive = true } = {}) {
    this.agent = new Agent({ keepAlive, maxSockets: 64 });
  }

  /**
   * One request; resolves with the body of a 200 reply (empty when `onChunk` took it), rejects on any other status.
   * @param {string} url
   * @param {CallOptions} [options]
   * @returns {Promise<string>}
   */
  call(url, { method = 'GET', body, headers = {}, onChunk } = {}) {
    return new Promise((ok, fail) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const all =
        payload === undefined
          ? headers
          : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
      const req = request(url, { method, agent: this.agent, headers: all }, (res) => {
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (c) => {
          if (!onChunk || res.statusCode !== 200) text += c;
          else {
            try {
              onChunk(c);
            } catch (err) {
              req.destroy(err instanceof Error ? err : new Error(String(err)));
            }
          }
        });
        res.on('end', () => {
          if (res.statusCode !== 200)
            fail(new Error(`${method} ${url} -> HTTP ${res.statusCode}: ${text.slice(0, 500)}`));
          else ok(text);
        });
        res.on('error', fail);
      });
      req.setTimeout(REQUEST_TIMEOUT_MS, () =>
        req.destroy(new Error(`${method} ${url} timed out after ${REQUEST_TIMEOUT_MS} ms`)),
      );
      req.on('error', fail);
      req.end(payload);
    });
  }

  /**
   * One streamed chat completion. Resolves with TTFT (first content text), the completion tokens
   * the server's usage chunk reports, the finish reason, the text and when each piece of it arrived.
   * @param {string} url
   * @param {object} body
   * @param {StreamOptions} [options]
   * @returns {Promise<StreamResult>}
   */
  async streamChat(url, body, { onContent } = {}) {
    const t0 = now();
    let buffer = '';
    let content = '';
    /** @type {number[]} */
    const contentTimes = [];
    let timings = /** @type {LlamaTimings | null} */ (null);
    // Set by the chunk callback: typed by a cast, so the checker does not narrow them to their initial value.
    let ttft = /** @type {number | null} */ (null);
    let usage = /** @type {ChatChunk['usage']} */ (null);
    let done = /** @type {boolean} */ (false);
    let finishReason = /** @type {string | null} */ (null);
    await this.call(url, {
      method: 'POST',
      body: { ...body, stream: true, stream_options: { include_usage: true } },
      onChunk: (chunk) => {
        buffer += chunk;
        let at;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          // An event may carry an `id:` line (Conveyor's, for resuming) before its data.
          const line = block.split('\n').find((l) => l.startsWith('data: '));
          if (!line) continue;
          const data = line.slice(6);
          if (data === '[DONE]') {
            done = true;
            continue;
          }
          const json = /** @type {ChatChunk} */ (JSON.parse(data));
          if (json.error) throw new Error(`stream error: ${JSON.stringify(json.error)}`);
          const choice = json.choices?.[0];
          const text = choice?.delta?.content;
          if (text) {
            const at = now();
            if (ttft === null) ttft = at - t0;
            content += text;
            contentTimes.push(at);
            onContent?.(contentTimes.length);
          }
          if (choice?.finish_reason) finishReason = choice.finish_reason;
          if (json.usage) usage = json.usage;
          if (json.timings) timings = json.timings;
        }
      },
    });
    if (!done) throw new Error('stream ended without data: [DONE]');
    if (!usage) throw new Error('stream carried no usage chunk');
    return {
      ttft: ttft ?? now() - t0,
      tokens: usage.completion_tokens,
      promptTokens: usage.prompt_tokens,
      finishReason,
      start: t0,
      end: now(),
      content,
      contentTimes,
      cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? null,
      timings,
    };
  }

  destroy() {
    this.agent.destroy();
  }
}
