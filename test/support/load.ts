/** How one request of a load ended. */
export type Outcome =
  /** The whole reply: every token it was asked for, sync or streamed (ending in [DONE]). */
  | 'ok'
  /** A clean, retryable refusal: 503 with Retry-After, or a stream's error event saying the service is unavailable. */
  | 'retryable'
  /** Anything else: a 500, another status, a stream cut without an error event, a reply with tokens missing. */
  | 'bad'
  /** No answer within the bound: accepted (or not) and never answered. */
  | 'hung';

export interface RequestRecord {
  stream: boolean;
  sentAt: number;
  endedAt: number;
  outcome: Outcome;
  detail: string;
}

interface ErrorPayload {
  error?: { type?: string; code?: string | null; message?: string };
}

/** A reply, or one chunk of a streamed one: what the checks read of it. */
interface ChatBody {
  choices?: { logprobs?: { content?: unknown[] | null } | null }[];
  usage?: { completion_tokens?: number } | null;
}

const retryableError = (body: ErrorPayload): boolean => body.error?.type === 'service_unavailable';

/** The tokens a reply (or chunk) carries: with logprobs on, each comes with its own entry. */
const tokensIn = (body: ChatBody): number => body.choices?.[0]?.logprobs?.content?.length ?? 0;

/**
 * One chat request, sync or streamed, classified. `boundMs` is how long it may take before it
 * counts as hung; `maxTokens` its length (ignore_eos makes it exact). Logprobs are asked for so that
 * every token the client receives can be counted: a reply with a hole (events lost, or two attempts
 * spliced) carries fewer, or more, than its usage says, and is bad even if it ended well.
 */
export async function chatRequest(
  baseUrl: string,
  model: string,
  stream: boolean,
  maxTokens: number,
  boundMs: number,
): Promise<RequestRecord> {
  const sentAt = Date.now();
  const done = (outcome: Outcome, detail = ''): RequestRecord => ({
    stream,
    sentAt,
    endedAt: Date.now(),
    outcome,
    detail,
  });
  try {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        messages: [{ role: 'user', content: `Request of ${maxTokens} tokens` }],
        max_tokens: maxTokens,
        temperature: 0,
        ignore_eos: true,
        logprobs: true,
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
      }),
      signal: AbortSignal.timeout(boundMs),
    });
    const text = await res.text();
    if (res.status === 503) {
      return res.headers.get('retry-after') && retryableError(JSON.parse(text) as ErrorPayload)
        ? done('retryable', text.slice(0, 200))
        : done('bad', `503 without Retry-After: ${text.slice(0, 200)}`);
    }
    if (res.status !== 200) return done('bad', `${res.status}: ${text.slice(0, 300)}`);
    const whole = (received: number, usage: number | undefined): RequestRecord =>
      received === maxTokens && usage === maxTokens
        ? done('ok')
        : done('bad', `${received} tokens received, ${usage} in the usage, of ${maxTokens}`);
    if (!stream) {
      const body = JSON.parse(text) as ChatBody;
      return whole(tokensIn(body), body.usage?.completion_tokens);
    }
    const payloads = text
      .split('\n\n')
      .filter(Boolean)
      .map(
        (block) =>
          block
            .split('\n')
            .find((l) => l.startsWith('data: '))
            ?.slice(6) ?? '',
      );
    const last = payloads.at(-1);
    if (last === '[DONE]') {
      const chunks = payloads.slice(0, -1).map((p) => JSON.parse(p) as ChatBody);
      return whole(
        chunks.reduce((n, c) => n + tokensIn(c), 0),
        chunks.at(-1)?.usage?.completion_tokens,
      );
    }
    const error = last ? (JSON.parse(last) as ErrorPayload) : {};
    if (error.error) return retryableError(error) ? done('retryable', last) : done('bad', `stream error: ${last}`);
    return done('bad', `stream cut: ${text.slice(-300)}`);
  } catch (err) {
    const name = (err as Error).name;
    return name === 'TimeoutError' ? done('hung', `no answer in ${boundMs} ms`) : done('bad', (err as Error).message);
  }
}

/** One failover under load: when the primary was killed, when the new one was named, when service came back. */
export interface FailoverRun {
  at: number;
  failoverMs: number;
  serviceGapMs: number;
}

/** Runs `lanes` request loops until `stop()`; each lane alternates sync and streamed requests, of `maxTokens(lane, i)`. */
export class LoadDriver {
  readonly records: RequestRecord[] = [];
  private running = true;
  private readonly lanes: Promise<void>[];

  constructor(
    baseUrl: string,
    model: string,
    lanes: number,
    maxTokens: (lane: number, i: number) => number,
    boundMs: number,
  ) {
    this.lanes = Array.from({ length: lanes }, async (_, lane) => {
      for (let i = 0; this.running; i++) {
        const record = await chatRequest(baseUrl, model, (i + lane) % 2 === 1, maxTokens(lane, i), boundMs);
        this.records.push(record);
        // Retry-After is 1 s; a client that honours it loosely (here, 100 ms) measures the outage more finely.
        if (record.outcome !== 'ok') await new Promise((r) => setTimeout(r, 100));
      }
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
  }

  count(outcome: Outcome): number {
    return this.records.filter((r) => r.outcome === outcome).length;
  }

  /** From `since` until a request sent at or after it succeeded; null when none has. */
  serviceGap(since: number): number | null {
    const ends = this.records.filter((r) => r.outcome === 'ok' && r.sentAt >= since).map((r) => r.endedAt);
    return ends.length ? Math.min(...ends) - since : null;
  }

  /** Waits for a request sent at or after `since` to succeed, and says how long from `since` that took. */
  async serviceBack(since: number, boundMs: number): Promise<number> {
    let gap: number | null;
    while ((gap = this.serviceGap(since)) === null) {
      if (Date.now() - since > boundMs) throw new Error('no request succeeded after the failover');
      await new Promise((r) => setTimeout(r, 20));
    }
    return gap;
  }

  /** What a failover test prints: the requests' outcomes, each failover's timings, the batch's counts. */
  failoverReport(runs: FailoverRun[], batch: { request_counts?: unknown } | null) {
    return {
      runs: runs.length,
      requests: this.records.length,
      ok: this.count('ok'),
      failed: this.count('retryable'),
      bad: this.count('bad'),
      lost: this.count('hung'),
      failoverMs: runs.map((k) => k.failoverMs),
      timeWithoutServiceMs: runs.map((k) => k.serviceGapMs),
      batch: batch?.request_counts,
    };
  }
}
