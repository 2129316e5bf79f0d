import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { readInputLines } from './batch-input.reader.js';

async function linesOf(content: string | Buffer, fromLine = 0) {
  const read = [];
  for await (const line of readInputLines(Readable.from([content]), fromLine)) read.push(line);
  return read;
}

describe('readInputLines', () => {
  it('numbers non-blank lines as an editor does, CRLF or LF', async () => {
    expect(await linesOf('{"a":1}\r\n\r\n{"b":2}\n  \n{"c":3}')).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 3, text: '{"b":2}' },
      { line: 5, text: '{"c":3}' },
    ]);
  });

  it('drops a UTF-8 byte-order mark at the start of the file, and only there', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const file = Buffer.concat([bom, Buffer.from('{"a":1}\n'), bom, Buffer.from('{"b":2}\n')]);
    expect(await linesOf(file)).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: '\uFEFF{"b":2}' },
    ]);
  });

  it('resumes after a line already read', async () => {
    expect(await linesOf('\uFEFF{"a":1}\n{"b":2}\n', 1)).toEqual([{ line: 2, text: '{"b":2}' }]);
  });
});
