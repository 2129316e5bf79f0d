// The upstream's streamed chunks, read into what the engine uses: text, reasoning, tool call pieces,
// log-probabilities, finish reasons, usage and progress.
import type { FinishReason, TokenAlternative, TokenLogprob } from '@conveyor/queue';
import type { UpstreamCallDelta } from './tool-call-indexes.js';
import { count, list, record, text } from './upstream-json.js';

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
