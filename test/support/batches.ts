import type OpenAI from 'openai';
import { toFile } from 'openai';
import type { BatchOutputLine } from '@conveyor/openai';

export interface LineSpec {
  custom_id: string;
  method?: string;
  url?: string;
  body: Record<string, unknown>;
}

export const chatLine = (customId: string, body: Record<string, unknown> = {}): LineSpec => ({
  custom_id: customId,
  body: {
    model: 'conveyor-tiny',
    messages: [{ role: 'user', content: `Request ${customId}` }],
    max_tokens: 4,
    temperature: 0,
    ...body,
  },
});

export const jsonl = (lines: Array<LineSpec | string>): string =>
  lines
    .map((l) => (typeof l === 'string' ? l : JSON.stringify({ method: 'POST', url: '/v1/chat/completions', ...l })))
    .join('\n') + '\n';

export async function submitBatch(client: OpenAI, content: string, window = '24h'): Promise<OpenAI.Batches.Batch> {
  const file = await client.files.create({ file: await toFile(Buffer.from(content), 'input.jsonl'), purpose: 'batch' });
  return client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: window as '24h',
  });
}

export async function waitForBatch(
  client: OpenAI,
  id: string,
  done: (b: OpenAI.Batches.Batch) => boolean = finished,
  timeoutMs = 45_000,
): Promise<OpenAI.Batches.Batch> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(id);
    if (done(batch)) return batch;
    if (Date.now() > until)
      throw new Error(
        `batch ${id} still ${batch.status} after ${timeoutMs} ms: ${JSON.stringify(batch.request_counts)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A line of a batch output or error file, its response body typed as the reply the endpoint gives. */
export type OutputLine<Body = unknown> = Omit<BatchOutputLine, 'response'> & {
  response: (Omit<NonNullable<BatchOutputLine['response']>, 'body'> & { body: Body }) | null;
};

export async function fileLines<Body = unknown>(
  client: OpenAI,
  id: string | null | undefined,
): Promise<Array<OutputLine<Body>>> {
  if (!id) return [];
  const text = await (await client.files.content(id)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutputLine<Body>);
} /** Whether a batch has reached a status it never leaves. */
const finished = (b: OpenAI.Batches.Batch): boolean =>
  ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);

/** The batch once finished, polled through failed reads (a Redis failover under way); null if not within `timeoutMs`. */
export async function finishedBatch(
  client: OpenAI,
  id: string,
  timeoutMs = 30_000,
): Promise<OpenAI.Batches.Batch | null> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
    const batch = await client.batches.retrieve(id).catch(() => null);
    if (batch && finished(batch)) return batch;
  }
  return null;
}
