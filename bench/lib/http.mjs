// A keep-alive HTTP client and an SSE chat-completions reader, used the same way against every server.
import { Agent, request } from 'node:http';
import { now } from './stats.mjs';

const REQUEST_TIMEOUT_MS = 180_000;

export class HttpClient {
  constructor({ keepAlive = true } = {}) {
    this.agent = new Agent({ keepAlive, maxSockets: 64 });
  }

  call(url, { method = 'GET', body, headers = {}, onChunk } = {}) {
    return new Promise((ok, fail) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const all = payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
      const req = request(url, { method, agent: this.agent, headers: all }, (res) => {
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (c) => {
          if (!onChunk || res.statusCode !== 200) text += c;
          else {
            try {
              onChunk(c);
            } catch (err) {
              req.destroy(err);
            }
          }
        });
        res.on('end', () => {
          if (res.statusCode !== 200) fail(new Error(`${method} ${url} -> HTTP ${res.statusCode}: ${text.slice(0, 500)}`));
          else ok(text);
        });
        res.on('error', fail);
      });
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${url} timed out after ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', fail);
      req.end(payload);
    });
  }

  /**
   * One streamed chat completion. Resolves with TTFT (first content text), the completion tokens
   * the server's usage chunk reports, and the finish reason.
   */
  async streamChat(url, body) {
    const t0 = now();
    let buffer = '';
    let ttft = null;
    let usage = null;
    let done = false;
    let finishReason = null;
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
          const json = JSON.parse(data);
          if (json.error) throw new Error(`stream error: ${JSON.stringify(json.error)}`);
          const choice = json.choices?.[0];
          if (ttft === null && choice?.delta?.content) ttft = now() - t0;
          if (choice?.finish_reason) finishReason = choice.finish_reason;
          if (json.usage) usage = json.usage;
        }
      },
    });
    if (!done) throw new Error('stream ended without data: [DONE]');
    if (!usage) throw new Error('stream carried no usage chunk');
    return { ttft: ttft ?? now() - t0, tokens: usage.completion_tokens, promptTokens: usage.prompt_tokens, finishReason, end: now() };
  }

  destroy() {
    this.agent.destroy();
  }
}
