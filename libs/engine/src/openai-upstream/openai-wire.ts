import type { ChatTurn, FinishReason, TokenAlternative, TokenLogprob } from '@conveyor/queue';
import { EngineInputError, type GenerateRequest } from '../core/generation-engine.js';
import type { UpstreamCallDelta } from './tool-call-indexes.js';

/**
 * How an upstream is spoken to. `openai`: any OpenAI-compatible server; only what the request sets is
 * sent, so the upstream's own defaults apply to the rest. `llama-server`: llama.cpp's server run by the
 * worker; unset sampling fields get OpenAI's neutral values, as the in-process engine gives them (llama.cpp
 * would apply top_k 40, top_p 0.95 and min_p 0.05), and it reports each token's count and the prompt's size
 * as it goes (`timings_per_token`, `return_progress`).
 */
export type UpstreamDialect = 'openai' | 'llama-server';

type Body = Record<string, unknown>;

/** The data: URI each image of the request is sent as, by its hash. */
export type ImageUris = ReadonlyMap<string, string>;

/** The fields chat and legacy completion requests share: sampling, budget, stops, choices, streaming. */
function commonFields(request: GenerateRequest, model: string, dialect: UpstreamDialect): Body {
  const s = request.sampling;
  const neutral = dialect === 'llama-server';
  const body: Body = {
    model,
    stream: true,
    stream_options: { include_usage: true },
    temperature: s.temperature,
  };
  const set = (name: string, value: unknown, fallback?: unknown) => {
    const chosen = value ?? (neutral ? fallback : undefined);
    if (chosen !== undefined) body[name] = chosen;
  };
  set('top_p', s.topP, 1);
  // 0 turns top-k off in llama.cpp and vLLM alike.
  set('top_k', s.topK !== undefined && s.topK > 0 ? s.topK : undefined, 0);
  set('min_p', s.minP, 0);
  // llama.cpp calls it repeat_penalty, vLLM repetition_penalty: each ignores the other's name.
  set('repeat_penalty', s.repeatPenalty, 1);
  set('repetition_penalty', s.repeatPenalty);
  set('presence_penalty', s.presencePenalty);
  set('frequency_penalty', s.frequencyPenalty);
  set('seed', s.seed);
  if (s.ignoreEos) body.ignore_eos = true;
  set('min_tokens', s.minTokens);
  if (s.logitBias && Object.keys(s.logitBias).length) body.logit_bias = s.logitBias;
  if (request.stop.length) body.stop = request.stop;
  const sent = request.continueFrom?.tokens ?? 0;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens - sent;
  if ((request.n ?? 1) !== 1) body.n = request.n;
  if (neutral) {
    body.timings_per_token = true;
    body.return_progress = true;
  }
  return body;
}

/** The body of a streamed `/chat/completions` request for a chat job. */
export function chatRequestBody(
  request: GenerateRequest,
  model: string,
  dialect: UpstreamDialect,
  images: ImageUris,
): Body {
  const body = commonFields(request, model, dialect);
  const messages: Body[] = request.messages.map((turn) => wireMessage(turn, images));
  const partial = request.continueFrom?.text;
  if (partial) {
    // The reply so far, as an assistant turn the model continues (llama.cpp's server does so for any
    // trailing assistant turn; vLLM when told to, with these two fields, which llama.cpp also reads).
    messages.push({ role: 'assistant', content: partial });
    body.continue_final_message = true;
    body.add_generation_prompt = false;
  }
  body.messages = messages;
  if (dialect === 'llama-server' && request.stop.length) {
    // llama.cpp's server says which stop string ended a reply only in its debugging field, `__verbose`,
    // which it adds to a chat stream's last chunk alone; `response_fields` keeps that field to the two it
    // is read for. Legacy completions are not asked: there it would come with every token.
    body.verbose = true;
    body.response_fields = ['stop_type', 'stopping_word'];
  }
  if (request.tools?.length) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        ...(t.parameters !== undefined ? { parameters: t.parameters } : {}),
      },
    }));
    const choice = request.toolChoice;
    if (choice !== undefined)
      body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
    // A named function is called once. llama.cpp's server makes one call unless told otherwise, where
    // OpenAI's default is as many as the model makes.
    const parallel =
      typeof choice === 'object' ? false : (request.parallelToolCalls ?? (dialect === 'llama-server' || undefined));
    if (parallel !== undefined) body.parallel_tool_calls = parallel;
  }
  const format = request.responseFormat;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema')
    body.response_format = { type: 'json_schema', json_schema: { name: format.name, schema: format.schema } };
  if (request.logprobs !== undefined) {
    body.logprobs = true;
    // llama.cpp's server reports no log-probabilities at all for 0 alternatives: ask for one, keep none.
    body.top_logprobs = dialect === 'llama-server' ? Math.max(1, request.logprobs) : request.logprobs;
  }
  return body;
}

/** The body of a streamed `/completions` request for a legacy completion job (raw prompts). */
export function completionRequestBody(request: GenerateRequest, model: string, dialect: UpstreamDialect): Body {
  const body = commonFields(request, model, dialect);
  const prompts = request.prompts ?? [];
  body.prompt = prompts.length === 1 ? prompts[0] : prompts;
  if (request.logprobs !== undefined)
    body.logprobs = dialect === 'llama-server' ? Math.max(1, request.logprobs) : request.logprobs;
  return body;
}

function wireMessage(turn: ChatTurn, images: ImageUris): Body {
  if (turn.role === 'tool') return { role: 'tool', tool_call_id: turn.toolCallId ?? '', content: turn.content };
  if (turn.role === 'assistant' && turn.toolCalls?.length) {
    return {
      role: 'assistant',
      content: turn.content || null,
      tool_calls: turn.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    };
  }
  if (!turn.parts) return { role: turn.role, content: turn.content };
  return {
    role: turn.role,
    content: turn.parts.map((part) =>
      part.type === 'text'
        ? { type: 'text', text: part.text }
        : { type: 'image_url', image_url: { url: images.get(part.image.sha256) ?? '' } },
    ),
  };
}

// Reading the upstream's JSON without trusting its shape.
const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** One choice's part of a streamed chunk. */
export interface ChunkChoice {
  index: number;
  text?: string;
  reasoning?: string;
  /** As the upstream numbers them (or not): ToolCallIndexes numbers them for the reply. */
  toolCalls: UpstreamCallDelta[];
  logprobs: Array<Omit<TokenLogprob, 'top'> & { top: TokenAlternative[] }>;
  finishReason?: FinishReason;
  /**
   * The stop string that ended the choice, where the upstream says: llama.cpp's server (`__verbose`,
   * when asked for), vLLM (`stop_reason`) and SGLang (`matched_stop`). OpenAI's API does not say.
   */
  stopString?: string;
  /** Tokens the choice has generated so far, where the upstream says (llama.cpp's server). */
  generated?: number;
}

export interface ChunkUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
}

/** A streamed chunk (`chat.completion.chunk` or `text_completion`), as much of it as is understood. */
export interface Chunk {
  choices: ChunkChoice[];
  usage?: ChunkUsage;
  /** The prompt's size in tokens, where the upstream reports its progress (llama.cpp's server). */
  promptTokens?: number;
  /** An error sent in the stream instead of a chunk. */
  error?: { status: number; body: unknown };
}

/** Parses one SSE event's data; undefined for `[DONE]`. */
export function parseChunk(data: string): Chunk | undefined {
  if (data.trim() === '[DONE]') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw new Error(`The upstream sent an event that is not JSON: ${data.slice(0, 200)}`);
  }
  const chunk = record(json) ?? {};
  const error = record(chunk.error);
  if (error) return { choices: [], error: { status: count(error.code) ?? count(chunk.code) ?? 500, body: chunk } };

  const timings = record(chunk.timings);
  const generated = count(timings?.predicted_n);
  const verbose = record(chunk.__verbose);
  const stoppingWord = verbose?.stop_type === 'word' ? text(verbose.stopping_word) : undefined;
  const choices = list(chunk.choices).map((raw): ChunkChoice => {
    const choice = record(raw) ?? {};
    const delta = record(choice.delta);
    // vLLM's stop_reason and SGLang's matched_stop are a token id when a stop token ended the choice: no string.
    const stopString = stoppingWord || text(choice.stop_reason) || text(choice.matched_stop);
    return {
      index: count(choice.index) ?? 0,
      // A chat chunk's text is its delta's; a legacy completion chunk's is the choice's own.
      text: delta ? text(delta.content) : text(choice.text),
      reasoning: delta ? (text(delta.reasoning_content) ?? text(delta.reasoning)) : undefined,
      toolCalls: list(delta?.tool_calls).map(toolCallDelta),
      logprobs: readLogprobs(choice.logprobs),
      finishReason: finishReason(choice.finish_reason),
      ...(stopString ? { stopString } : {}),
      generated,
    };
  });
  const usage = record(chunk.usage);
  const progress = record(chunk.prompt_progress);
  return {
    choices,
    usage: usage
      ? {
          promptTokens: count(usage.prompt_tokens) ?? 0,
          completionTokens: count(usage.completion_tokens) ?? 0,
          cachedTokens: count(record(usage.prompt_tokens_details)?.cached_tokens),
        }
      : undefined,
    promptTokens: count(progress?.total),
  };
}

function toolCallDelta(raw: unknown): UpstreamCallDelta {
  const call = record(raw) ?? {};
  const fn = record(call.function) ?? {};
  const delta: UpstreamCallDelta = { arguments: text(fn.arguments) ?? '' };
  const index = count(call.index);
  const id = text(call.id);
  const name = text(fn.name);
  if (index !== undefined) delta.index = index;
  if (id) delta.id = id;
  if (name) delta.name = name;
  return delta;
}

const finishReason = (value: unknown): FinishReason | undefined => {
  if (typeof value !== 'string') return undefined;
  if (value === 'length') return 'length';
  if (value === 'tool_calls' || value === 'function_call') return 'tool_calls';
  return 'stop';
};

/** The floor of a log-probability, as the in-process engine reports a token it found impossible. */
const LOGPROB_FLOOR = -9999;
const logprob = (value: unknown): number => Math.max(LOGPROB_FLOOR, count(value) ?? LOGPROB_FLOOR);
const bytesOf = (token: string, raw: unknown): number[] =>
  Array.isArray(raw) && raw.every((b) => typeof b === 'number') ? (raw as number[]) : [...Buffer.from(token, 'utf8')];

/**
 * Log-probabilities in either shape: the chat one (`content: [{token, logprob, bytes, top_logprobs}]`,
 * which llama.cpp's server also sends for legacy completions) or the legacy one (`tokens`,
 * `token_logprobs`, `top_logprobs: [{token: logprob}]`).
 */
function readLogprobs(raw: unknown): ChunkChoice['logprobs'] {
  const logprobs = record(raw);
  if (!logprobs) return [];
  if (Array.isArray(logprobs.content)) {
    return logprobs.content.map((entry) => {
      const item = record(entry) ?? {};
      const token = text(item.token) ?? '';
      return {
        token,
        logprob: logprob(item.logprob),
        bytes: bytesOf(token, item.bytes),
        top: list(item.top_logprobs).map((alt) => {
          const a = record(alt) ?? {};
          const t = text(a.token) ?? '';
          return { token: t, logprob: logprob(a.logprob), bytes: bytesOf(t, a.bytes) };
        }),
      };
    });
  }
  const tokens = list(logprobs.tokens);
  const values = list(logprobs.token_logprobs);
  const tops = list(logprobs.top_logprobs);
  return tokens.map((t, i) => {
    const token = text(t) ?? '';
    const top = Object.entries(record(tops[i]) ?? {}).map(([alt, lp]) => ({
      token: alt,
      logprob: logprob(lp),
      bytes: [...Buffer.from(alt, 'utf8')],
    }));
    return { token, logprob: logprob(values[i]), bytes: [...Buffer.from(token, 'utf8')], top };
  });
}

/** A failure of the upstream or of reaching it: another attempt (on another worker, or later) may succeed. */
export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/**
 * Statuses that say the request itself is wrong, which no retry fixes: the client gets them as a 400.
 * Not among them: a key or model the operator set up wrong (401, 403, 404), and load (408, 409, 429).
 */
const NOT_THE_REQUEST = new Set([401, 403, 404, 408, 409, 429]);

/**
 * What an error answer (or an error event in the stream) from the upstream becomes: the request's
 * fault (a 4xx) is an EngineInputError with the upstream's message, code and param; anything else is
 * an UpstreamError, which the queue retries.
 */
export function upstreamFailure(status: number, body: unknown, upstream: string): Error {
  const outer = record(body) ?? {};
  const error = record(outer.error) ?? outer;
  const message =
    text(error.message) ?? (typeof body === 'string' && body ? body.slice(0, 500) : `HTTP status ${status}`);
  if (status >= 400 && status < 500 && !NOT_THE_REQUEST.has(status)) {
    const code =
      text(error.code) ??
      (text(error.type) === 'exceed_context_size_error' ? 'context_length_exceeded' : 'invalid_request');
    return new EngineInputError(message, code, text(error.param) ?? null);
  }
  return new UpstreamError(`${upstream} answered ${status}: ${message}`, status);
}
