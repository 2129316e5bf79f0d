// The console's page: every figure comes from the platform's own API, called from this tab with the key
// the user signed in with (kept in session storage, sent only in headers). No build step, no framework:
// the DOM, fetch, and uPlot for the usage chart.

const KEY_ITEM = 'conveyor-console-key';
const $ = (id) => document.getElementById(id);
const state = {
  key: sessionStorage.getItem(KEY_ITEM),
  admin: false,
  tab: 'batches',
  timer: null,
  seen: new Map(),
  /** Each batch's webhook deliveries as last asked for, in words. */
  webhooks: new Map(),
};

/** Calls the API with the key: Anthropic's routes take it as x-api-key, the others as a Bearer token. */
async function api(path, init = {}) {
  const anthropic = path.startsWith('/v1/messages');
  const headers = {
    ...(init.headers ?? {}),
    ...(anthropic
      ? { 'x-api-key': state.key, 'anthropic-version': '2023-06-01' }
      : { authorization: `Bearer ${state.key}` }),
  };
  const res = await fetch(path, { ...init, headers });
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    throw new Error(body.error?.message ?? `${res.status} ${res.statusText}`);
  }
  return res;
}
const json = async (path, init) => (await api(path, init)).json();

/** A cell of text (never HTML: every value shown came from the API, some of it from users). */
function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text;
  row.append(td);
  return td;
}
function button(label, onClick, description) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  if (description) b.setAttribute('aria-label', description);
  b.addEventListener('click', onClick);
  return b;
}

// ── Signing in ────────────────────────────────────────────────────────────────────────────────────────

async function signIn(key) {
  state.key = key;
  // The admin key opens the admin routes; an API key opens its own batches, files and usage.
  state.admin = await api('/v1/admin/keys').then(
    () => true,
    () => false,
  );
  if (!state.admin) await api('/v1/batches?limit=1');
  sessionStorage.setItem(KEY_ITEM, key);
  $('sign-in').hidden = true;
  $('tabs').hidden = false;
  for (const b of document.querySelectorAll('[data-admin]')) b.hidden = !state.admin;
  // The admin key owns no files: it sees and cancels every key's batches, and starts none.
  for (const b of document.querySelectorAll('[data-user]')) b.hidden = state.admin;
  $('batch-caption').textContent = state.admin ? "Every key's batches, newest first" : 'Your batches, newest first';
  $('who').textContent = state.admin ? 'Signed in with the admin key' : 'Signed in with an API key';
  show(state.admin ? 'usage' : 'batches');
}

function signOut() {
  sessionStorage.removeItem(KEY_ITEM);
  state.key = null;
  clearInterval(state.timer);
  location.reload();
}

function show(tab) {
  state.tab = tab;
  for (const id of ['batches', 'usage', 'keys', 'fleet']) $(id).hidden = id !== tab;
  for (const b of document.querySelectorAll('[data-tab]')) {
    if (b.dataset.tab === tab) b.setAttribute('aria-current', 'page');
    else b.removeAttribute('aria-current');
  }
  clearInterval(state.timer);
  const refresh = { batches: refreshBatches, usage: refreshUsage, keys: refreshKeys, fleet: refreshFleet }[tab];
  const run = () => refresh().catch((err) => console.warn(err));
  void run();
  state.timer = setInterval(run, tab === 'batches' || tab === 'fleet' ? 2000 : 15000);
}

// ── Batches ───────────────────────────────────────────────────────────────────────────────────────────

async function startBatch(event) {
  event.preventDefault();
  $('batch-error').textContent = '';
  const file = $('batch-file').files[0];
  const endpoint = $('batch-endpoint').value;
  try {
    if (endpoint === 'anthropic') {
      const requests = (await file.text())
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l));
      await api('/v1/messages/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ requests }),
      });
    } else {
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', file, file.name);
      const uploaded = await json('/v1/files', { method: 'POST', body: form });
      await api('/v1/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ input_file_id: uploaded.id, endpoint, completion_window: '24h' }),
      });
    }
    $('batch-form').reset();
    await refreshBatches();
  } catch (err) {
    $('batch-error').textContent = `The batch was not started: ${err.message}`;
  }
}

/** A batch in the Batches API's shape as a row: its progress, plan and the cancel route given (if it may be cancelled). */
function batchRow(b, cancelRoute) {
  return {
    id: b.id,
    status: b.status,
    done: b.request_counts.completed + b.request_counts.failed,
    failed: b.request_counts.failed,
    total: b.request_counts.total,
    created: b.created_at,
    plan: b.plan,
    files: [],
    cancel: ['validating', 'in_progress'].includes(b.status) ? cancelRoute : null,
  };
}

/** Every key's batches, for the admin: the admin routes list and cancel them; the files stay their owners'. */
async function listEveryBatch() {
  return (await json('/v1/admin/batches?limit=50')).data.map((b) => ({
    ...batchRow(b, `/v1/admin/batches/${b.id}/cancel`),
    owner: b.owner,
  }));
}

/** OpenAI's batches and Anthropic's Message Batches as one kind of row. */
async function listBatches() {
  if (state.admin) return listEveryBatch();
  const openai = (await json('/v1/batches?limit=50')).data.map((b) => ({
    ...batchRow(b, `/v1/batches/${b.id}/cancel`),
    files: [
      ['output', b.output_file_id && `/v1/files/${b.output_file_id}/content`],
      ['errors', b.error_file_id && `/v1/files/${b.error_file_id}/content`],
    ],
    webhook: ['completed', 'failed', 'expired', 'cancelled'].includes(b.status)
      ? `/v1/batches/${b.id}/webhook_deliveries`
      : null,
  }));
  const anthropic = (await json('/v1/messages/batches?limit=50').catch(() => ({ data: [] }))).data.map((b) => {
    const c = b.request_counts;
    const done = c.succeeded + c.errored + c.canceled + c.expired;
    return {
      id: b.id,
      status: b.processing_status,
      done,
      failed: c.errored,
      total: done + c.processing,
      created: Date.parse(b.created_at) / 1000,
      plan: b.plan,
      files: [['results', b.results_url && `/v1/messages/batches/${b.id}/results`]],
      cancel: b.processing_status === 'in_progress' ? `/v1/messages/batches/${b.id}/cancel` : null,
    };
  });
  return [...openai, ...anthropic].sort((a, b) => b.created - a.created);
}

/** Lines per second since the last look at the batch, and the time left at that rate. */
function pace(batch) {
  const now = Date.now();
  const last = state.seen.get(batch.id);
  state.seen.set(batch.id, { at: now, done: batch.done, rate: last?.rate ?? null });
  if (last && now > last.at && batch.done >= last.done) {
    const rate = ((batch.done - last.done) * 1000) / (now - last.at);
    state.seen.get(batch.id).rate = last.rate === null ? rate : 0.7 * last.rate + 0.3 * rate;
  }
  const rate = state.seen.get(batch.id).rate;
  if (!rate || batch.done >= batch.total) return rate ? `${rate.toFixed(1)} lines/s` : '';
  const seconds = Math.round((batch.total - batch.done) / rate);
  return `${rate.toFixed(1)} lines/s, ${seconds < 90 ? `${seconds} s` : `${Math.round(seconds / 60)} min`} left`;
}

async function download(path, name) {
  const blob = await (await api(path)).blob();
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

async function refreshBatches() {
  const rows = [];
  for (const b of await listBatches()) {
    const row = document.createElement('tr');
    row.dataset.batch = b.id;
    cell(row, b.id);
    if (state.admin) cell(row, b.owner);
    cell(row, b.status).className = 'status';
    const progress = document.createElement('progress');
    progress.max = Math.max(1, b.total);
    progress.value = b.done;
    progress.setAttribute('aria-label', `${b.done} of ${b.total} lines done`);
    const td = cell(row, '');
    td.append(progress, ` ${b.done} / ${b.total}${b.failed ? ` (${b.failed} failed)` : ''}`);
    cell(row, pace(b));
    cell(
      row,
      b.plan
        ? `${b.plan.groups} groups, ${b.plan.repeats_folded} repeats folded, ${b.plan.prompt_tokens_saved} prompt tokens saved`
        : '',
    );
    const files = cell(row, '');
    for (const [label, path] of b.files)
      if (path)
        files.append(button(label, () => download(path, `${b.id}_${label}.jsonl`), `Download the ${label} of ${b.id}`));
    if (!state.admin) webhookCell(row, b);
    const actions = cell(row, '');
    if (b.cancel)
      actions.append(button('Cancel', () => api(b.cancel, { method: 'POST' }).then(refreshBatches), `Cancel ${b.id}`));
    rows.push(row);
  }
  $('batch-rows').replaceChildren(...rows);
}

/** What became of the batch's event at its key's webhook, asked for on a click (then kept). */
function webhookCell(row, batch) {
  const td = cell(row, state.webhooks.get(batch.id) ?? '');
  if (!batch.webhook || state.webhooks.has(batch.id)) return;
  td.append(
    button(
      'Webhook',
      async () => {
        const { data } = await json(batch.webhook);
        const said = data.length
          ? data
              .map(
                (d) =>
                  `${d.type}: ${d.status} after ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}` +
                  (d.status !== 'delivered' && d.last_error ? ` (${d.last_error})` : ''),
              )
              .join('; ')
          : 'no webhook event';
        state.webhooks.set(batch.id, said);
        td.replaceChildren(said);
      },
      `Show the webhook deliveries of ${batch.id}`,
    ),
  );
}

// ── Usage ─────────────────────────────────────────────────────────────────────────────────────────────

let chart = null;

async function refreshUsage() {
  const start = Math.floor(Date.now() / 1000 / 3600) * 3600 - 23 * 3600;
  const query = `start_time=${start}&bucket_width=1h&group_by=model&limit=24`;
  const path = state.admin
    ? `/v1/organization/usage/completions?${query}&group_by=api_key_id`
    : `/v1/usage/completions?${query}`;
  const page = await json(path);
  $('usage-scope').textContent = state.admin ? 'Every key, per hour.' : 'Your key, per hour.';
  const times = [];
  const input = [];
  const output = [];
  const totals = new Map();
  for (const bucket of page.data) {
    times.push(bucket.start_time);
    input.push(bucket.results.reduce((s, r) => s + r.input_tokens, 0));
    output.push(bucket.results.reduce((s, r) => s + r.output_tokens, 0));
    for (const r of bucket.results) {
      const id = `${r.api_key_id ?? 'you'}\u0000${r.model ?? ''}`;
      const t = totals.get(id) ?? {
        key: r.api_key_id ?? 'you',
        model: r.model ?? '',
        input: 0,
        output: 0,
        requests: 0,
      };
      t.input += r.input_tokens;
      t.output += r.output_tokens;
      t.requests += r.num_model_requests;
      totals.set(id, t);
    }
  }
  const limits = state.admin ? await dailyLimits() : new Map();
  const rows = [...totals.values()].map((t) => {
    const row = document.createElement('tr');
    const limit = limits.get(t.key);
    cell(row, limit ? `${t.key} (limit ${limit} a day, ${Math.max(0, limit - t.input - t.output)} left)` : t.key);
    cell(row, t.model);
    cell(row, String(t.input));
    cell(row, String(t.output));
    cell(row, String(t.requests));
    return row;
  });
  $('usage-rows').replaceChildren(...rows);
  const data = [times, input, output];
  const target = $('usage-chart');
  if (chart) chart.setData(data);
  else
    chart = new globalThis.uPlot(
      {
        width: Math.min(900, target.clientWidth || 900),
        height: 260,
        series: [
          {},
          { label: 'tokens in', stroke: '#0b57d0', width: 2 },
          { label: 'tokens out', stroke: '#b3261e', width: 2 },
        ],
        axes: [{}, { size: 70 }],
      },
      data,
      target,
    );
}

async function dailyLimits() {
  const keys = (await json('/v1/admin/keys')).data;
  return new Map(keys.filter((k) => k.tokenLimit?.perDay).map((k) => [k.name, k.tokenLimit.perDay]));
}

// ── Keys (admin) ──────────────────────────────────────────────────────────────────────────────────────

async function createKey(event) {
  event.preventDefault();
  $('key-error').textContent = '';
  const perDay = Number($('key-per-day').value);
  try {
    const made = await json('/v1/admin/keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: $('key-name').value, ...(perDay ? { tokenLimit: { perDay } } : {}) }),
    });
    shownOnce(made);
    $('key-form').reset();
    await refreshKeys();
  } catch (err) {
    $('key-error').textContent = `The key was not made: ${err.message}`;
  }
}

/** A key made or rotated is shown here, this once: the platform keeps only its digest. */
function shownOnce(made) {
  const out = $('new-key');
  out.replaceChildren(`Key "${made.name}" (shown once, copy it now): `);
  const code = document.createElement('code');
  code.className = 'secret';
  code.textContent = made.key;
  out.append(code);
}

async function refreshKeys() {
  const keys = (await json('/v1/admin/keys')).data;
  $('key-rows').replaceChildren(
    ...keys.map((k) => {
      const row = document.createElement('tr');
      row.dataset.key = k.name;
      cell(row, k.name);
      cell(row, k.source);
      cell(row, k.redacted_value ?? '(configured)');
      const limits = [
        k.rateLimit && `${k.rateLimit.requests} requests per ${k.rateLimit.perSeconds} s`,
        k.tokenLimit?.perDay && `${k.tokenLimit.perDay} tokens a day`,
        k.tokenLimit?.perMinute && `${k.tokenLimit.perMinute} tokens a minute`,
        k.tiers && `tiers ${k.tiers.join(', ')}`,
        k.weight && `weight ${k.weight}`,
        k.deadlineMs && `deadline ${k.deadlineMs} ms`,
        k.webhook && `webhook ${k.webhook.url}`,
      ].filter(Boolean);
      cell(row, limits.join('; '));
      const actions = cell(row, '');
      if (k.source === 'runtime') {
        const name = encodeURIComponent(k.name);
        actions.append(
          button('Edit', () => openEditor(k), `Edit the limits of ${k.name}`),
          ' ',
          button(
            'Rotate',
            async () => shownOnce(await json(`/v1/admin/keys/${name}/rotate`, { method: 'POST' })),
            `Rotate ${k.name}`,
          ),
          ' ',
          button(
            'Revoke',
            () => api(`/v1/admin/keys/${name}`, { method: 'DELETE' }).then(refreshKeys),
            `Revoke ${k.name}`,
          ),
        );
      }
      return row;
    }),
  );
}

/** The key being edited, its form filled with what it has now. */
let editing = null;
function openEditor(k) {
  editing = k.name;
  $('key-edit-title').textContent = `Limits of ${k.name}`;
  $('edit-per-day').value = k.tokenLimit?.perDay ?? '';
  $('edit-per-minute').value = k.tokenLimit?.perMinute ?? '';
  $('edit-requests').value = k.rateLimit && k.rateLimit.perSeconds === 60 ? k.rateLimit.requests : '';
  $('edit-tiers').value = k.tiers?.join(', ') ?? '';
  $('edit-weight').value = k.weight ?? '';
  $('edit-deadline').value = k.deadlineMs ?? '';
  $('edit-webhook').value = k.webhook?.url ?? '';
  $('edit-webhook-secret').value = '';
  $('key-edit').hidden = false;
  $('edit-per-day').focus();
}

/** The admin API sets each field given and removes each given as null (its default applies again). */
async function saveLimits(event) {
  event.preventDefault();
  $('key-error').textContent = '';
  const number = (id) => ($(id).value === '' ? null : Number($(id).value));
  const perDay = number('edit-per-day');
  const perMinute = number('edit-per-minute');
  const requests = number('edit-requests');
  const tiers = $('edit-tiers')
    .value.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const url = $('edit-webhook').value.trim();
  const secret = $('edit-webhook-secret').value.trim();
  const body = {
    tokenLimit: perDay || perMinute ? { ...(perDay ? { perDay } : {}), ...(perMinute ? { perMinute } : {}) } : null,
    rateLimit: requests ? { requests, perSeconds: 60 } : null,
    tiers: tiers.length ? tiers : null,
    weight: number('edit-weight'),
    deadlineMs: number('edit-deadline'),
    // A webhook is changed only with its secret, which is never shown back; an empty URL removes it.
    ...(url ? (secret ? { webhook: { url, secret } } : {}) : { webhook: null }),
  };
  try {
    await api(`/v1/admin/keys/${encodeURIComponent(editing)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    $('key-edit').hidden = true;
    await refreshKeys();
  } catch (err) {
    $('key-error').textContent = `The limits were not saved: ${err.message}`;
  }
}

// ── Fleet (admin) ─────────────────────────────────────────────────────────────────────────────────────

async function refreshFleet() {
  const STATUS = { ready: 'ready', loading: 'loading', cold: 'cold (loads on demand)', no_workers: 'no live worker' };
  const { data } = await json('/v1/admin/fleet');
  $('fleet-rows').replaceChildren(
    ...data.map((d) => {
      const row = document.createElement('tr');
      row.dataset.deployment = d.id;
      cell(row, d.id);
      cell(row, STATUS[d.status] ?? d.status);
      cell(row, String(d.workers.length));
      cell(row, d.sequences.busy === null ? `? / ${d.sequences.total}` : `${d.sequences.busy} / ${d.sequences.total}`);
      const w = d.waiting;
      cell(row, `${w.priority} / ${w.default} / ${w.flex} / ${w.batch}${d.routed ? ` (+${d.routed} routed)` : ''}`);
      cell(row, String(d.running));
      cell(row, String(d.batch_unqueued));
      cell(
        row,
        d.workers
          .map((x) => `${x.id}: ${x.free === null ? '?' : x.sequences - x.free} of ${x.sequences} busy`)
          .join('; '),
      );
      return row;
    }),
  );
}

// ── Wiring ────────────────────────────────────────────────────────────────────────────────────────────

$('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  $('sign-in-error').textContent = '';
  signIn($('key').value.trim()).catch((err) => {
    state.key = null;
    $('sign-in-error').textContent = `Not signed in: ${err.message}`;
  });
});
$('sign-out').addEventListener('click', signOut);
for (const b of document.querySelectorAll('[data-tab]')) b.addEventListener('click', () => show(b.dataset.tab));
$('batch-form').addEventListener('submit', startBatch);
$('key-form').addEventListener('submit', createKey);
$('key-edit').addEventListener('submit', saveLimits);
$('key-edit-cancel').addEventListener('click', () => ($('key-edit').hidden = true));
if (state.key) signIn(state.key).catch(() => signOut());
