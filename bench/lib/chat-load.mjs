// A closed-loop load of streamed chat completions: each of `concurrency` loops sends one request, reads
// its stream to the end, and sends the next. The client reads as little as it can (the usage at the
// end of each stream), so that on a small machine the bench takes as little CPU from the platform as
// it can.
import http from 'node:http';

/**
 * @typedef {object} LoadCounts
 * @property {number} requests replies finished with usage
 * @property {number} tokens their completion tokens
 * @property {number} errors requests that got no 200 or broke off
 * @property {number} replyMs summed time of the finished replies, from send to end
 */

export class ChatLoad {
  /**
   * @param {object} options
   * @param {string[]} options.bases base URLs of the API replicas; loop i goes to replica i mod n
   * @param {string} options.model
   * @param {number} options.concurrency
   * @param {number} options.maxTokens
   */
  constructor({ bases, model, concurrency, maxTokens }) {
    this.bases = bases.map((b) => new URL(b));
    this.concurrency = concurrency;
    this.body = JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'Tell me a story about a queue and its workers, please.' }],
      max_tokens: maxTokens,
      stream: true,
      stream_options: { include_usage: true },
    });
    this.agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
    /** @type {LoadCounts} */
    this.counts = { requests: 0, tokens: 0, errors: 0, replyMs: 0 };
    /** requests sent and not yet ended */
    this.inFlight = 0;
    this.stopping = false;
    /** @type {Promise<void>[]} */
    this.loops = [];
    /** @type {string[]} */
    this.errorSamples = [];
  }

  start() {
    this.loops = Array.from({ length: this.concurrency }, (_, i) => this.loop(this.bases[i % this.bases.length]));
  }

  /** Lets every loop finish the request it is on, then resolves. */
  async stop() {
    this.stopping = true;
    await Promise.all(this.loops);
    this.agent.destroy();
  }

  /** @returns {LoadCounts} */
  snapshot() {
    return { ...this.counts };
  }

  /** @param {URL} base */
  async loop(base) {
    while (!this.stopping) {
      const started = performance.now();
      this.inFlight++;
      try {
        const tokens = await this.one(base);
        this.counts.requests++;
        this.counts.tokens += tokens;
        this.counts.replyMs += performance.now() - started;
      } catch (err) {
        this.counts.errors++;
        if (this.errorSamples.length < 5) this.errorSamples.push(String(err instanceof Error ? err.message : err));
        await new Promise((r) => setTimeout(r, 100));
      } finally {
        this.inFlight--;
      }
    }
  }

  /**
   * One streamed request; resolves with its completion tokens, from the usage chunk at the end.
   * @param {URL} base
   * @returns {Promise<number>}
   */
  one(base) {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: base.hostname,
          port: base.port,
          path: '/v1/chat/completions',
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(this.body) },
        },
        (res) => {
          let tail = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            // Only the end matters: the usage chunk and [DONE].
            tail = (tail + chunk).slice(-2048);
          });
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}: ${tail.slice(0, 300)}`));
            const usage = /"completion_tokens":(\d+)/.exec(tail.slice(tail.lastIndexOf('"usage"')));
            if (!usage || !tail.includes('[DONE]'))
              return reject(new Error(`no usage at the end: ${tail.slice(-300)}`));
            resolve(Number(usage[1]));
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(this.body);
    });
  }
}
