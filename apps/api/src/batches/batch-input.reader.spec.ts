import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { loadConfig } from '@conveyor/config';
import { MODEL, MemoryFiles, endpoints } from '../../../../test/support/batch-fakes.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { newBatchRecord } from '../repositories/batch-record.js';
import { BatchInput, InputUnreadable, readInputLines, type InputRequest } from './batch-input.reader.js';

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

describe('BatchInput', () => {
  const config = loadConfig({ MODEL: 'tiny' });
  const lineOf = (customId: unknown, body: Record<string, unknown> = { model: MODEL }) =>
    JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body });

  function setUp(content: string) {
    const files = new MemoryFiles();
    const reader = new BatchInput(config, files, endpoints, new DeploymentRegistry(config));
    const record = newBatchRecord({
      id: 'batch_0123456789abcdef01234567',
      owner: 'anonymous',
      endpoint: '/v1/chat/completions',
      input_file_id: files.put(content),
      completion_window: '24h',
      metadata: null,
      created_at: 0,
      expires_at: 0,
    });
    return { files, reader, record };
  }

  async function requestsOf(lines: AsyncGenerator<InputRequest>) {
    const read = [];
    for await (const request of lines) read.push(request);
    return read;
  }

  it('yields each line checked against the endpoint and the deployments, numbered as in the file', async () => {
    const content = [lineOf('a'), '', '{not json', lineOf(''), lineOf('d', { model: 'nope' }), lineOf('e')].join('\n');
    const { reader, record } = setUp(content);
    const read = await requestsOf(await reader.open(record, { unreadableSince: null }));
    expect(read.map((r) => [r.line, r.ok])).toEqual([
      [1, true],
      [3, false],
      [4, false],
      [5, false],
      [6, true],
    ]);
    expect(read[0]).toMatchObject({ ok: true, value: { customId: 'a', deployment: { id: MODEL } } });
    expect(read[1]).toEqual({ ok: false, line: 3, error: expect.objectContaining({ code: 'invalid_json_line' }) });
    // A line that fails after its custom_id was found valid still names its request; one whose custom_id is bad does not.
    expect(read[2]).not.toHaveProperty('customId');
    expect(read[3]).toMatchObject({ ok: false, customId: 'd', error: { code: 'model_not_found', line: 5 } });
  });

  it('reads on after a given line', async () => {
    const { reader, record } = setUp([lineOf('a'), lineOf('b'), lineOf('c')].join('\n'));
    const read = await requestsOf(await reader.open(record, { unreadableSince: null }, 2));
    expect(read.map((r) => (r.ok ? [r.line, r.value.customId] : null))).toEqual([[3, 'c']]);
  });

  it('calls a missing input unreadable at once, and any other read failure only once it lasted a minute', async () => {
    const { files, reader, record } = setUp(lineOf('a'));
    const watch = { unreadableSince: null as number | null };
    files.failReads = true;
    await expect(reader.open(record, watch)).rejects.toThrow(new Error('the store is unreachable'));
    expect(watch.unreadableSince).toEqual(expect.any(Number));
    watch.unreadableSince = Date.now() - 59_000;
    await expect(reader.open(record, watch)).rejects.not.toBeInstanceOf(InputUnreadable);
    watch.unreadableSince = Date.now() - 60_000;
    await expect(reader.open(record, watch)).rejects.toThrow(InputUnreadable);
    // A read that works starts the minute over.
    files.failReads = false;
    await requestsOf(await reader.open(record, watch));
    expect(watch.unreadableSince).toBeNull();
    await files.delete(record.input_file_id);
    await expect(reader.open(record, watch)).rejects.toThrow(/does not exist in this file store/);
    await expect(reader.open(record, watch)).rejects.toBeInstanceOf(InputUnreadable);
  });
});
