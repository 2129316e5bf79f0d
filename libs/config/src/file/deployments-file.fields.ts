import type { SamplingPresetDto } from '@conveyor/protocol';
import { SIMULATED_DEFAULTS } from '../engine-config.js';
import type {
  ApiKeyDto,
  AppAliasDto,
  DeploymentDto,
  DeploymentsFileDto,
  ModelAliasDto,
  RateLimitDto,
  SimulatedDto,
  AdapterDto,
  TokenLimitDto,
  UpstreamDto,
  WebhookDto,
} from './deployments-file.dto.js';

/** What a field of the deployments file means, and its default when that is not simply "none". */
export interface FieldDoc {
  meaning: string;
  /** Said in words: another field, a variable, or "required" for a field the DTO requires only sometimes. */
  default?: string;
}

/** A doc for every data field of a DTO: a field added without one does not compile. */
type DocsOf<T> = { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]-?: FieldDoc };

export const FILE_FIELDS: DocsOf<DeploymentsFileDto> = {
  deployments: { meaning: 'The deployments served, at least one.' },
  apiKeys: { meaning: 'Keys that open the API, by name, each with its own rate limit; they join `API_KEYS`.' },
  modelAliases: {
    meaning:
      'Other model names clients may send, exact or patterns, each reaching a deployment; `MODEL_ALIASES` adds to them (see [Model aliases](deployments.md#model-aliases)).',
  },
  defaultDeployment: {
    default: 'none: an unknown name gets 404 `model_not_found`',
    meaning: "The deployment's id that any model name nothing else matches reaches.",
  },
};

export const MODEL_ALIAS_FIELDS: DocsOf<ModelAliasDto> = {
  name: {
    meaning:
      'The model name clients send; with `*` (any characters) or `?` (one), a pattern. An exact name wins over patterns, and the first pattern that matches over later ones.',
  },
  deployment: { meaning: "The id of the deployment it reaches; the reply's `model` is still the name sent." },
};

export const DEPLOYMENT_FIELDS: DocsOf<DeploymentDto> = {
  id: { meaning: 'The `model` clients send; it also names the queue.' },
  model: {
    default: 'required, unless `upstream.model` names it; `simulated` for a simulated engine',
    meaning:
      'The model served: a preset (`tiny`, `think`, `vision`, `rerank`, `bench`), a `.gguf` path or an `hf:` URI; with an upstream, the name it serves the model under; with a simulated engine, any name.',
  },
  pool: { default: '`cpu`', meaning: 'The worker pool that serves it.' },
  contextSize: { default: '`CONTEXT_SIZE`', meaning: 'Tokens of context per sequence.' },
  promptCharsPerToken: {
    default: '`PROMPT_CHARS_PER_TOKEN`',
    meaning:
      'The most characters one token can stand for: a longer prompt than this many per token of context is refused.',
  },
  parallel: { default: '`PARALLEL`', meaning: 'Sequences per worker: the jobs a worker runs at once.' },
  threads: { default: '`THREADS`', meaning: 'CPU threads per worker.' },
  flashAttention: { default: '`FLASH_ATTENTION`', meaning: "llama.cpp's flash attention." },
  promptCache: {
    default: '`PROMPT_CACHE`',
    meaning: 'What a sequence keeps of finished replies for later prompts; `true` is `full`, `false` is `off`.',
  },
  promptCacheRam: {
    default: '`PROMPT_CACHE_RAM`',
    meaning:
      'MiB of host memory for prompt beginnings pushed out of the sequences, read back when a prompt begins with one; 0: none.',
  },
  defaults: { meaning: 'Sampling fields a request gets when it leaves them unset.' },
  alias: { meaning: 'Also serve it at `/<org>/<app>/v1/...`.' },
  auth: { default: '`private`', meaning: '`private`: the alias routes need an API key; `public`: they need none.' },
  task: {
    default: '`generate`',
    meaning: 'Chat and text completions, embeddings (`/v1/embeddings`) only, or reranking (`/v1/rerank`) only.',
  },
  reasoningParser: {
    meaning: "`think`: return a thinking model's `<think>…</think>` segment as `reasoning_content`.",
  },
  engine: {
    default: '`llama-cpp`; `llama-server` with `mmproj`, `openai` with `upstream`, `simulated` with `simulated`',
    meaning:
      'What runs the model: node-llama-cpp in the worker, a llama.cpp server the worker starts, an upstream, or no model at all (capacity and fault tests).',
  },
  mmproj: {
    default: "none (the `vision` preset's own)",
    meaning: 'The vision projector, a `.gguf` path or an `hf:` URI; implies `engine: llama-server`.',
  },
  imageMaxTokens: { default: "llama-server's own", meaning: 'The most tokens one image may take.' },
  vision: {
    default: '`true` with a projector, else `false`',
    meaning: "Whether it takes images; an upstream's operator says so.",
  },
  upstream: { meaning: 'An OpenAI-compatible server already running; implies `engine: openai`.' },
  simulated: { meaning: 'The pace and text of replies generated without a model; implies `engine: simulated`.' },
  deadlineMs: {
    default: 'none',
    meaning:
      "A deadline for its requests, in ms from receipt: one still queued then is withdrawn, one running is stopped (504 `deadline_exceeded`); the shortest of it, the key's and the request's applies.",
  },
  load: {
    default: '`pinned`',
    meaning:
      '`pinned`: every worker of its pool loads it at start and keeps it. `on-demand`: one worker with room in its `WORKER_MEMORY_BUDGET_MB` loads it when requests wait and no worker serves it, and unloads it, least recently used first, when another model needs the room (see [Models on demand](deployments.md#models-on-demand)).',
  },
  adapters: {
    meaning:
      "LoRA adapters of its model, each served as a model of its own: `name` (the `model` clients send), `path` (a `.gguf` adapter, an `hf:` URI, or the generated `tiny-lora`) and `scale` (default 1); each gets this deployment's settings, a queue and contexts of its own (see [Adapters](deployments.md#lora-adapters)). In-process engine only.",
  },
  minWarm: {
    default: '`0`',
    meaning:
      'With `load: on-demand`: workers that keep it loaded with no request waiting. Below it, a worker with room loads it; none unloads it for another model while it has no more.',
  },
  memoryMb: {
    default: "estimated: the model file plus its sequences' KV cache",
    meaning: "MiB it takes of a worker's memory budget.",
  },
};

export const SIMULATED_FIELDS: DocsOf<SimulatedDto> = {
  ttftMs: {
    default: `\`${SIMULATED_DEFAULTS.ttftMs}\``,
    meaning: "Milliseconds from a job's start to its first token.",
  },
  tpotMs: {
    default: `\`${SIMULATED_DEFAULTS.tpotMs}\``,
    meaning: 'Milliseconds per token after the first: one round of every running reply.',
  },
  outputTokens: {
    default: `\`${SIMULATED_DEFAULTS.outputTokens}\``,
    meaning: 'Tokens of a reply whose request sets no `max_tokens`.',
  },
  text: {
    default: `\`${SIMULATED_DEFAULTS.text}\``,
    meaning: 'What replies say: one word (with its leading space) per token, repeated as long as a reply runs.',
  },
};

export const UPSTREAM_FIELDS: DocsOf<UpstreamDto> = {
  url: { meaning: 'Its base URL, `/v1` included: `http://` or `https://`.' },
  apiKey: { meaning: 'Its key; `apiKeyEnv` keeps it out of the file instead.' },
  apiKeyEnv: { meaning: 'The environment variable that holds its key.' },
  model: { default: "the deployment's `model`", meaning: 'The model it is asked for.' },
};

export const ALIAS_FIELDS: DocsOf<AppAliasDto> = {
  org: { meaning: 'The first segment of the path.' },
  app: { meaning: 'The second segment of the path.' },
};

export const DEFAULTS_FIELDS: DocsOf<SamplingPresetDto> = {
  temperature: { meaning: 'Sampling temperature; `0` always takes the likeliest token.' },
  top_p: { meaning: 'Sample from the likeliest tokens whose probabilities add up to this.' },
  top_k: { meaning: 'Sample from this many of the likeliest tokens; `0` and `-1` turn it off.' },
  min_p: { meaning: 'Leave out tokens less likely than this fraction of the likeliest.' },
  repetition_penalty: { meaning: 'Penalty on tokens already in the context; `1` is none.' },
  repeat_penalty: { meaning: "`repetition_penalty` under the desktop apps' name." },
  presence_penalty: { meaning: "OpenAI's presence penalty." },
  frequency_penalty: { meaning: "OpenAI's frequency penalty." },
  max_tokens: { meaning: 'The most tokens of a reply.' },
};

export const API_KEY_FIELDS: DocsOf<ApiKeyDto> = {
  name: { meaning: "The key's name: its replies, files and batches, and its rate limit, are kept under it." },
  sha256: { meaning: "The key's SHA-256, so the file holds no key." },
  rateLimit: { default: 'no limit', meaning: 'How many requests the key may make in a window.' },
  tokenLimit: {
    default: 'no limit',
    meaning: 'How many tokens (input and output) the key may use per minute and per day.',
  },
  tiers: {
    default: 'auto, default, flex',
    meaning: 'The service tiers the key may ask for (`priority` only where listed).',
  },
  weight: { default: '1', meaning: "The key's share of the fleet against other keys' when they compete." },
  deadlineMs: {
    default: 'none',
    meaning:
      "A deadline for the key's requests, in ms from receipt; the shortest of it, the request's own and the deployment's applies.",
  },
  webhook: { default: 'none', meaning: "Where the key's batch events are posted, signed as Standard Webhooks." },
};

export const TOKEN_LIMIT_FIELDS: DocsOf<TokenLimitDto> = {
  perMinute: {
    default: 'no limit',
    meaning: "Tokens per minute (a fixed window) of the key's requests; batch lines are not held to it.",
  },
  perDay: {
    default: 'no limit',
    meaning: 'Tokens per UTC day, requests and batches together (a batch reserves its estimate as it starts).',
  },
};

export const WEBHOOK_FIELDS: DocsOf<WebhookDto> = {
  url: { meaning: 'The http(s) address events are posted to.' },
  secret: { meaning: 'The signing secret, `whsec_` and base64, as Standard Webhooks uses.' },
};

export const RATE_LIMIT_FIELDS: DocsOf<RateLimitDto> = {
  requests: { meaning: 'Requests allowed in one window.' },
  perSeconds: { meaning: 'The window, in seconds.' },
};

export const ADAPTER_FIELDS: DocsOf<AdapterDto> = {
  name: { meaning: "The `model` clients send for it; it also names the adapter's queue, and `/v1/models` lists it." },
  path: {
    meaning:
      "The adapter: a `.gguf` LoRA adapter of the deployment's model, an `hf:` URI, or the generated `tiny-lora`.",
  },
  scale: { default: '`1`', meaning: 'How strongly the adapter applies.' },
};
