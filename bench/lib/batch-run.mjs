// One batch through the Files and Batches API: uploaded, created, polled until it ends, its output read.

/**
 * The fields of a Batches API batch the benches read; any other field (an extension of the platform's)
 * is kept as it came.
 * @typedef {{ id: string, status: string, output_file_id?: string | null, error_file_id?: string | null,
 *             request_counts?: { total: number, completed: number, failed: number },
 *             [field: string]: unknown }} Batch
 */
/**
 * A line of a chat-completions batch's output file, the parts the benches read.
 * @typedef {{ custom_id: string, response: { status_code: number, request_id?: string,
 *             body: { id?: string, usage?: Usage } } | null, error: unknown }} OutputLine
 */
/**
 * @typedef {{ prompt_tokens: number, completion_tokens: number,
 *             prompt_tokens_details?: { cached_tokens?: number } }} Usage
 */
/**
 * What `runBatchFile` measured: `wall` from the upload's start, `fromCreate` from the creation request, both
 * to the poll that saw the batch end; `output` the output file's lines, parsed.
 * @typedef {{ batch: Batch, wall: number, fromCreate: number, output: OutputLine[] }} BatchFileRun
 */

const FINAL = new Set(['completed', 'failed', 'expired', 'cancelled']);

/**
 * A JSON reply over fetch, typed by the caller; throws on any status but 200.
 * @template T
 * @param {string} url
 * @param {RequestInit} [init]
 * @returns {Promise<T>}
 */
export async function fetchJson(url, init) {
  const res = await fetch(url, init);
  const text = await res.text();
  if (res.status !== 200)
    throw new Error(`${init?.method ?? 'GET'} ${url} -> HTTP ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/**
 * Uploads `jsonl` (`POST /v1/files`, purpose batch), creates a chat-completions batch of it
 * (`POST /v1/batches`), asks for its status every `pollMs` until it ends, and reads its output file.
 * Throws unless it ends `completed`; failed lines are the caller's to check in `request_counts`.
 * @param {string} base the API's base URL
 * @param {string} jsonl the batch file, one request a line
 * @param {{ fileName?: string, pollMs?: number, timeoutMs?: number }} [options]
 * @returns {Promise<BatchFileRun>}
 */
export async function runBatchFile(base, jsonl, { fileName = 'bench.jsonl', pollMs = 50, timeoutMs = 600_000 } = {}) {
  const t0 = performance.now();
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([jsonl], { type: 'application/jsonl' }), fileName);
  /** @type {{ id: string }} */
  const file = await fetchJson(`${base}/v1/files`, { method: 'POST', body: form });
  const created = performance.now();
  /** @type {Batch} */
  let batch = await fetchJson(`${base}/v1/batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
  });
  while (!FINAL.has(batch.status)) {
    if (performance.now() - created > timeoutMs)
      throw new Error(`batch ${batch.id} still ${batch.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, pollMs));
    batch = await fetchJson(`${base}/v1/batches/${batch.id}`);
  }
  const end = performance.now();
  if (batch.status !== 'completed')
    throw new Error(`batch ${batch.id} ended ${batch.status}: ${JSON.stringify(batch.request_counts)}`);
  /** @type {OutputLine[]} */
  let output = [];
  if (batch.output_file_id) {
    const res = await fetch(`${base}/v1/files/${batch.output_file_id}/content`);
    if (res.status !== 200) throw new Error(`output file of batch ${batch.id}: HTTP ${res.status}`);
    output = (await res.text())
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l));
  }
  return { batch, wall: end - t0, fromCreate: end - created, output };
}

/**
 * Uploads `lines` chat requests as a batch file, creates the batch and waits for it to complete.
 * @param {string} base the API's base URL
 * @param {object} options
 * @param {string} options.model
 * @param {number} options.lines
 * @param {number} options.maxTokens
 * @param {number} [options.timeoutMs]
 * @returns {Promise<{ ms: number, completed: number, failed: number, tokens: number }>} `ms`: from the
 *   batch's creation to `completed`
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
  const run = await runBatchFile(base, jsonl + '\n', { fileName: 'capacity.jsonl', timeoutMs });
  const { completed = 0, failed = 0 } = run.batch.request_counts ?? {};
  const tokens = run.output.reduce((sum, l) => sum + (l.response?.body.usage?.completion_tokens ?? 0), 0);
  return { ms: run.fromCreate, completed, failed, tokens };
}
