/**
 * Splits a Server-Sent Events stream into the `data` of its events, chunk by chunk as it arrives:
 * a chunk may end anywhere, mid-line or mid-character. Comments (`: ping`) and fields other than
 * `data` are skipped; an event's `data` lines are joined with newlines, as the SSE standard has it.
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  private data: string[] = [];

  /** The data of every event this chunk completes, in order. */
  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const events: string[] = [];
    let start = 0;
    for (;;) {
      const end = this.lineEnd(start);
      if (end < 0) break;
      const line = this.buffer.slice(start, end);
      start = end + (this.buffer[end] === '\r' && this.buffer[end + 1] === '\n' ? 2 : 1);
      this.line(line, events);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** The data of an event the stream ended in without its closing blank line. */
  end(): string[] {
    const events: string[] = [];
    const rest = this.buffer + this.decoder.decode();
    this.buffer = '';
    if (rest) this.line(rest, events);
    this.line('', events);
    return events;
  }

  /** Where the line starting at `from` ends; -1 while it is incomplete (a `\r` at the end may be half of `\r\n`). */
  private lineEnd(from: number): number {
    for (let i = from; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c === '\n') return i;
      if (c === '\r') return i + 1 < this.buffer.length ? i : -1;
    }
    return -1;
  }

  private line(line: string, events: string[]): void {
    if (line === '') {
      if (this.data.length) events.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.data.push(value);
  }
}
