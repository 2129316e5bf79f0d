// One batch through the Files and Batches API, timed from its creation to `completed`.

/**
 * Uploads `lines` chat requests as a batch file, creates the batch and waits for it to complete.
 * @param {string} base the API's base URL
 * @param {object} options
 * @param {string} options.model
 * @param {number} options.lines
 * @param {number} options.maxTokens
 * @param {number} [options.timeoutMs]
 * @returns {Promise<{ ms: number, completed: number, failed: number, tokens: number }>}
 */
export async function runBatch(base, { model, lines, maxTokens, timeoutMs = 600_000 }) {
  const jsonl = Array.from({ length: lines }, (_, i) =>
    JSON.stringify({
      custom_id: `line-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model, messages: [{ role: 'user', content: `Batch line ${i}` }], max_tokens: maxTokens },
    }),
  ).join('\n');
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([jsonl + '\n'], { type: 'application/jsonl' }), 'capacity.jsonl');
  const upload = await fetch(`${base}/v1/files`, { method: 'POST', body: form });
  if (upload.status !== 200) throw new Error(`upload: ${upload.status} ${await upload.text()}`);
  const file = /** @type {{ id: string }} */ (await upload.json());

  const started = performance.now();
  const created = await fetch(`${base}/v1/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  if (created.status !== 200) throw new Error(`create: ${created.status} ${await created.text()}`);
  const { id } = /** @type {{ id: string }} */ (await created.json());
  for (;;) {
    const res = await fetch(`${base}/v1/batches/${id}`);
    const batch =
      /** @type {{ status: string, request_counts: { completed: number, failed: number }, output_file_id?: string }} */ (
        await res.json()
      );
    if (['completed', 'failed', 'expired', 'cancelled'].includes(batch.status)) {
      const ms = performance.now() - started;
      if (batch.status !== 'completed') throw new Error(`batch ${id} ended ${batch.status}`);
      return { ms, ...batch.request_counts, tokens: await outputTokens(base, batch.output_file_id) };
    }
    if (performance.now() - started > timeoutMs)
      throw new Error(`batch ${id} still ${batch.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Completion tokens of a batch's output file, summed over its lines.
 * @param {string} base
 * @param {string | undefined} fileId
 */
async function outputTokens(base, fileId) {
  if (!fileId) return 0;
  const text = await (await fetch(`${base}/v1/files/${fileId}/content`)).text();
  let tokens = 0;
  for (const match of text.matchAll(/"completion_tokens":(\d+)/g)) tokens += Number(match[1]);
  return tokens;
}
