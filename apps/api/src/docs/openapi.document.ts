/**
 * The API's OpenAPI 3.1 description, written by hand so it states what the
 * routes really accept. A test checks that every controller route is in it.
 */
const error = { $ref: '#/components/schemas/Error' };
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { description: ERROR_TEXT[c], content: { 'application/json': { schema: error } } }]));
const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request: the error names the field in `param`',
  401: 'Missing or wrong credentials',
  404: 'Unknown model, app, file or batch (or another key\'s)',
  413: 'Body or file too large',
  429: 'Rate limit or queue depth exceeded; see Retry-After',
  503: 'No worker took the request in time, or the server is shutting down',
  504: 'The request deadline passed; the job was cancelled',
};
const json = (schema: object, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const obj = (description: string) => ({ type: 'object', description });
const chatBody = { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/ChatCompletionRequest' } } } };
const chatResponses = {
  '200': {
    description: 'A chat.completion, or with `stream: true` Server-Sent Events: `id: <n>` / `data: <chat.completion.chunk>` lines, closed by `data: [DONE]`',
    content: { 'application/json': { schema: obj('chat.completion') }, 'text/event-stream': { schema: { type: 'string' } } },
  },
  ...errors(400, 401, 404, 413, 429, 503, 504),
};
const idParam = (name: string, description: string) => ({ name, in: 'path', required: true, schema: { type: 'string' }, description });

export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'Conveyor',
    version: '0.1.0',
    description: 'Queue-based, OpenAI-compatible LLM inference. Every route but health, readiness, metrics and docs takes credentials when API keys are configured.',
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'OpenAI routes under /v1: `Authorization: Bearer <key>`' },
      apiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Hosted routes: `Api-Key <key>` (predict) or `Key <key>` (org/app)' },
      admin: { type: 'http', scheme: 'basic', description: 'Queue dashboard: the admin key as the Basic password (any user), or `Authorization: Bearer <admin key>`' },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['message', 'type', 'param', 'code'],
            properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: ['string', 'null'] } },
          },
        },
      },
      ChatCompletionRequest: {
        type: 'object',
        required: ['model', 'messages'],
        description: 'null for any optional field means "not set"; unknown fields are ignored.',
        properties: {
          model: { type: 'string' },
          messages: {
            type: 'array',
            minItems: 1,
            maxItems: 4096,
            items: {
              type: 'object',
              required: ['role', 'content'],
              properties: {
                role: { enum: ['system', 'developer', 'user', 'assistant'] },
                content: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', properties: { type: { enum: ['text', 'image_url'] }, text: { type: 'string' } } } }] },
              },
            },
          },
          max_tokens: { type: ['integer', 'null'], minimum: 1 },
          max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
          temperature: { type: ['number', 'null'], minimum: 0, maximum: 2, default: 1 },
          top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
          top_k: { type: ['integer', 'null'], minimum: -1 },
          min_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
          repetition_penalty: { type: ['number', 'null'] },
          repeat_penalty: { type: ['number', 'null'] },
          presence_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
          frequency_penalty: { type: ['number', 'null'], minimum: -2, maximum: 2 },
          seed: { type: ['integer', 'null'] },
          stop: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 16 }, { type: 'null' }] },
          stream: { type: ['boolean', 'null'] },
          stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } } },
          ignore_eos: { type: ['boolean', 'null'] },
        },
      },
    },
  },
  paths: {
    '/health': { get: { summary: 'Liveness', responses: { '200': json(obj('{status: "ok"}')) } } },
    '/ready': { get: { summary: 'Readiness: every deployment has a live worker, and the API is not shutting down', responses: { '200': json(obj('ready')), '503': json(obj('not_ready or draining'), 'Not ready') } } },
    '/metrics': { get: { summary: 'Prometheus metrics', responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } } } },
    '/openapi.json': { get: { summary: 'This document', responses: { '200': json(obj('OpenAPI 3.1')) } } },
    '/admin/queues': {
      get: {
        summary: 'Queue dashboard (Bull Board) over every deployment queue; served only when ADMIN_KEY or ADMIN_KEY_SHA256 is set. Its pages and JSON API live under this path.',
        security: [{ admin: [] }],
        responses: { '200': { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } }, ...errors(401) },
      },
    },
    '/docs': { get: { summary: 'This document as a page', responses: { '200': { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } } } },
    '/v1/models': { get: { summary: 'Deployed models, with live-worker counts', security: [{ bearer: [] }], responses: { '200': json(obj('list of models')), ...errors(401, 429) } } },
    '/v1/models/{model}': { get: { summary: 'One deployed model', security: [{ bearer: [] }], parameters: [idParam('model', 'Model id (may contain /)')], responses: { '200': json(obj('model')), ...errors(401, 404) } } },
    '/v1/chat/completions': { post: { summary: 'Chat completion (sync or SSE)', security: [{ bearer: [] }], requestBody: chatBody, responses: chatResponses } },
    '/v1/completions': { post: { summary: 'Legacy text completion (sync or SSE)', security: [{ bearer: [] }], requestBody: { required: true, content: { 'application/json': { schema: obj('{model, prompt, max_tokens?, n?, logprobs?, echo?, stream?, ...sampling}') } } }, responses: { '200': json(obj('text_completion')), ...errors(400, 401, 404, 413, 429, 503, 504) } } },
    '/v1/embeddings': { post: { summary: 'Embeddings (deployments with task: embeddings)', security: [{ bearer: [] }], requestBody: { required: true, content: { 'application/json': { schema: obj('{model, input, encoding_format?, dimensions?, user?}') } } }, responses: { '200': json(obj('list of embeddings')), ...errors(400, 401, 404, 413, 429, 503, 504) } } },
    '/v1/chat/completions/{completion_id}/stream': {
      get: {
        summary: 'Resume a streamed reply after the chunk named by Last-Event-ID',
        security: [{ bearer: [] }],
        parameters: [
          idParam('completion_id', 'The chunks\' id (chatcmpl-…)'),
          { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'integer' } },
          { name: 'include_usage', in: 'query', required: false, schema: { type: 'boolean' } },
        ],
        responses: { '200': { description: 'Server-Sent Events', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...errors(400, 401, 404) },
      },
    },
    '/environments/production/predict': { post: { summary: 'Hosted model-host form: the chat body, `Authorization: Api-Key <key>`', security: [{ apiKey: [] }], requestBody: chatBody, responses: chatResponses } },
    '/{org}/{app}/v1/models': { get: { summary: 'Hosted app form: the app\'s model (`Key <key>` when private)', security: [{ apiKey: [] }, {}], parameters: [idParam('org', 'Organisation'), idParam('app', 'App')], responses: { '200': json(obj('list of models')), ...errors(401, 404) } } },
    '/{org}/{app}/v1/chat/completions': { post: { summary: 'Hosted app form: chat completion (`Key <key>` when private)', security: [{ apiKey: [] }, {}], parameters: [idParam('org', 'Organisation'), idParam('app', 'App')], requestBody: chatBody, responses: chatResponses } },
    '/{org}/{app}/v1/completions': { post: { summary: 'Hosted app form: legacy text completion (`Key <key>` when private)', security: [{ apiKey: [] }, {}], parameters: [idParam('org', 'Organisation'), idParam('app', 'App')], requestBody: { required: true, content: { 'application/json': { schema: obj('completions body') } } }, responses: { '200': json(obj('text_completion')), ...errors(400, 401, 404, 429, 503, 504) } } },
    '/{org}/{app}/v1/embeddings': { post: { summary: 'Hosted app form: embeddings (`Key <key>` when private)', security: [{ apiKey: [] }, {}], parameters: [idParam('org', 'Organisation'), idParam('app', 'App')], requestBody: { required: true, content: { 'application/json': { schema: obj('embeddings body') } } }, responses: { '200': json(obj('list of embeddings')), ...errors(400, 401, 404, 429, 503, 504) } } },
    '/v1/files': {
      get: { summary: 'Files of this key', security: [{ bearer: [] }], responses: { '200': json(obj('list of files')), ...errors(401) } },
      post: { summary: 'Upload a JSONL file (multipart: file, purpose=batch)', security: [{ bearer: [] }], requestBody: { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' }, purpose: { enum: ['batch'] } } } } } }, responses: { '200': json(obj('file')), ...errors(400, 401, 413) } },
    },
    '/v1/files/{file_id}': {
      get: { summary: 'A file', security: [{ bearer: [] }], parameters: [idParam('file_id', 'file-…')], responses: { '200': json(obj('file')), ...errors(400, 401, 404) } },
      delete: { summary: 'Delete a file', security: [{ bearer: [] }], parameters: [idParam('file_id', 'file-…')], responses: { '200': json(obj('deleted')), ...errors(400, 401, 404) } },
    },
    '/v1/files/{file_id}/content': { get: { summary: 'A file\'s content (a batch\'s output grows while it runs)', security: [{ bearer: [] }], parameters: [idParam('file_id', 'file-…')], responses: { '200': { description: 'JSONL', content: { 'application/jsonl': { schema: { type: 'string' } } } }, ...errors(400, 401, 404) } } },
    '/v1/batches': {
      get: { summary: 'Batches of this key, newest first', security: [{ bearer: [] }], parameters: [{ name: 'after', in: 'query', schema: { type: 'string' } }, { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } }], responses: { '200': json(obj('list of batches')), ...errors(400, 401) } },
      post: { summary: 'Create a batch over an uploaded file', security: [{ bearer: [] }], requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['input_file_id', 'endpoint', 'completion_window'], properties: { input_file_id: { type: 'string' }, endpoint: { enum: ['/v1/chat/completions', '/v1/completions', '/v1/embeddings'] }, completion_window: { type: 'string', example: '24h' }, metadata: { type: 'object' } } } } } }, responses: { '200': json(obj('batch')), ...errors(400, 401, 404) } },
    },
    '/v1/batches/{batch_id}': { get: { summary: 'A batch', security: [{ bearer: [] }], parameters: [idParam('batch_id', 'batch_…')], responses: { '200': json(obj('batch')), ...errors(400, 401, 404) } } },
    '/v1/batches/{batch_id}/cancel': { post: { summary: 'Cancel a batch: running lines finish, the rest end as batch_cancelled', security: [{ bearer: [] }], parameters: [idParam('batch_id', 'batch_…')], responses: { '200': json(obj('batch')), ...errors(400, 401, 404) } } },
  },
} as const;
