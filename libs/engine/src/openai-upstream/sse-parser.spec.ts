import { describe, expect, it } from '@jest/globals';
import { SseParser } from './sse-parser.js';

describe('SseParser', () => {
  it('yields the data of each event, skipping comments and other fields', () => {
    const parser = new SseParser();
    expect(
      parser.push('data: {"a":1}\n\n: ping\n\nevent: x\nid: 3\ndata: two\ndata: lines\n\ndata: [DONE]\n\n'),
    ).toEqual(['{"a":1}', 'two\nlines', '[DONE]']);
  });

  it('takes chunks that end anywhere: mid-line, between \\r and \\n, or inside a character', () => {
    const parser = new SseParser();
    const bytes = Buffer.from('data: {"t":"é"}\r\n\r\ndata:x\r\n\r\n', 'utf8');
    const events: string[] = [];
    // One byte at a time splits the two-byte é and every \r\n.
    for (const byte of bytes) events.push(...parser.push(Uint8Array.of(byte)));
    expect(events).toEqual(['{"t":"é"}', 'x']);
  });

  it('ends an event the stream closed without its blank line', () => {
    const parser = new SseParser();
    expect(parser.push('data: last')).toEqual([]);
    expect(parser.end()).toEqual(['last']);
  });
});
