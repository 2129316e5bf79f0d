import type { ServerResponse } from 'node:http';

/**
 * Writes Server-Sent Events: `data: <json>\n\n`, with an `event:` name and an `id:` where asked, closed
 * by `data: [DONE]` or by just ending (see `SseFraming`).
 */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {}

  /** `headers`: those already set on the reply (rate-limit headers), which a hijacked reply would drop. */
  open(headers: Record<string, unknown> = {}): void {
    this.res.writeHead(200, {
      ...(headers as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      // Stops reverse proxies from buffering the stream.
      'x-accel-buffering': 'no',
    });
  }

  /**
   * `id` numbers the chunks of a reply, so a client that lost the connection can resume with Last-Event-ID;
   * `event` names the event (the Responses API names each by its type).
   */
  data(payload: unknown, id?: number, event?: string): void {
    if (this.res.writableEnded) return;
    const head = `${event === undefined ? '' : `event: ${event}\n`}${id === undefined ? '' : `id: ${id}\n`}`;
    this.res.write(`${head}data: ${JSON.stringify(payload)}\n\n`);
  }

  /** Ends the stream with no closing event. */
  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  /** Ends the stream with `data: [DONE]`, as chat and completion streams do. */
  done(): void {
    if (this.res.writableEnded) return;
    this.res.write('data: [DONE]\n\n');
    this.res.end();
  }

  /** Ends the stream with an error event; clients raise it as an API error. */
  fail(body: unknown, event?: string): void {
    if (this.res.writableEnded) return;
    this.data(body, undefined, event);
    this.res.end();
  }
}
