import type { BatchLineRef } from './batch.js';
import type { JobTerms } from './service-tiers.js';

/** A call the model made, as it travels in history and in replies. `arguments` is JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The image formats requests may carry. */
export type ImageMime = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

/**
 * An image of a chat turn. Its bytes are stored once, by their hash (`imageKey`), for as long as jobs
 * refer to it: a job carries this reference, never the image.
 */
export interface ImageRef {
  /** Hex SHA-256 of the image's bytes. */
  sha256: string;
  mime: ImageMime;
  bytes: number;
  width: number;
  height: number;
}

/** A part of a turn that carries images, in the order the request gave them. */
export type TurnPart = { type: 'text'; text: string } | { type: 'image'; image: ImageRef };

/** A chat turn after the API has normalised it: roles folded, text parts joined. */
export interface ChatTurn {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** The turn's text (a turn with images: its text parts, joined). */
  content: string;
  /** Only on a turn with images: its text and image parts, in order. */
  parts?: TurnPart[];
  /** Assistant turns: the calls the model made in that turn. */
  toolCalls?: ToolCall[];
  /** Tool turns: the id of the call this is the result of. */
  toolCallId?: string;
}

/** A function the model may call; `parameters` is its JSON Schema. */
export interface ToolSpec {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** `none`: never call; `auto`: the model decides; `required`: call one of the tools; `{name}`: call that one. */
export type ToolChoice = 'none' | 'auto' | 'required' | { name: string };

/** Structured output enforced by grammar. A `json_schema` schema is a JSON Schema object or boolean. */
export type OutputFormat =
  { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown> | boolean };

/** Sampling as the engine applies it; an absent field means the engine's neutral value. */
export interface Sampling {
  temperature: number;
  topP?: number;
  topK?: number;
  minP?: number;
  repeatPenalty?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  /** Never end on an end-of-generation token: replies run to max_tokens (benchmarks, load tests). */
  ignoreEos?: boolean;
  /** End-of-generation tokens and stop strings are held back until this many tokens are generated. */
  minTokens?: number;
  /** Token id → bias added to its logit (-100 bans it, +100 all but forces it). */
  logitBias?: Record<string, number>;
}

/** Job name of a generation (chat or legacy completion); a deployment's queue also carries embed jobs. */
export const GENERATE_JOB = 'generate' as const;

/** Payload of one generation job (chat or legacy completion). Carries no credentials: keys never reach Redis. */
export interface GenerationJobData extends JobTerms {
  requestId: string;
  deployment: string;
  /** The model name the client sent, where it is an alias of `deployment`: what the reply's `model` says. */
  model?: string;
  /** Chat turns, rendered by the model's own template. Empty when `prompts` is set. */
  messages: ChatTurn[];
  /** Legacy completions: raw prompts, generated from as they are; choice `p * n + i` is prompt p's i-th. */
  prompts?: string[];
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  /** False: a reply makes at most one tool call. Absent or true: as many as the model makes (a named toolChoice: one). */
  parallelToolCalls?: boolean;
  responseFormat?: OutputFormat;
  /**
   * The client's key for requests that share a beginning (Responses' `prompt_cache_key`: an agent's
   * session). It seeds the prompt's block hashes, so cache-aware routing keeps a key's requests on the
   * worker holding its prefix, and requests under other keys do not crowd onto it.
   */
  cacheKey?: string;
  sampling: Sampling;
  maxTokens?: number;
  /**
   * True: a maxTokens past what the context has left after the prompt is cut to that room, and the reply
   * runs to the context's end (Anthropic's Messages). Absent: such a request is refused before any output.
   */
  clampToContext?: boolean;
  stop: string[];
  /** Choices per prompt (default 1). */
  n?: number;
  /** Report each token's log-probability, with this many alternatives (0-20). Unset: none. */
  logprobs?: number;
  enqueuedAt: number;
  /**
   * Name of the API key that made the request (`anonymous` with authentication off), never the key:
   * only that caller may follow the reply. Absent on batch lines, which belong to their batch.
   */
  owner?: string;
  /**
   * The API replica that relays the reply: its events go to that replica's inbox (replyInboxKey).
   * Absent on batch lines, whose result goes to their batch.
   */
  replyTo?: string;
  /** Set when the job is a batch line. */
  batch?: BatchLineRef;
  /**
   * Attempts the job already started in another queue before it was moved to this one (a worker's
   * affinity queue hands jobs to the deployment's queue): its attempt numbers go on from there, so a
   * later attempt's reply events always outrank an earlier one's.
   */
  attemptBase?: number;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens whose KV cells an earlier request left and this one reused instead of computing. */
  cachedTokens?: number;
}

/** What the processor returns to BullMQ once the reply is fully published. */
export interface JobResult {
  finishReason: FinishReason;
  usage: TokenUsage;
}
