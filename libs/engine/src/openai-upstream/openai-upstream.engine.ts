import type { FinishReason, ImageRef, TokenUsage } from '@conveyor/queue';
import {
  EngineInputError,
  type GenerationEngine,
  type GenerateCallbacks,
  type GenerateRequest,
  type GenerateResult,
} from '../core/generation-engine.js';
import { ImageSource } from '../core/image-source.port.js';
import { ReasoningSplitter } from '../core/reasoning-splitter.js';
import { requestedStops } from '../core/stop-matcher.js';
import { parseChunk, type Chunk, type ChunkUsage } from './upstream-chunk.js';
import { upstreamFailure, UpstreamError } from './upstream-error.js';
import { chatRequestBody, completionRequestBody, type UpstreamDialect } from './upstream-request-body.js';
import { SseParser } from './sse-parser.js';
import { ToolCallIndexes } from './tool-call-indexes.js';
import { jsonOrText, readText, UpstreamHttp } from './upstream-http.js';

export interface OpenAiUpstreamEngineOptions {
  /** Base URL of the upstream's OpenAI API, `/v1` included. */
  url: string;
  /** Sent as `Authorization: Bearer <key>`; null: none. */
  apiKey: string | null;
  /** The `model` the upstream is asked for. */
  model: string;
  dialect?: UpstreamDialect;
  /** Where the bytes of the jobs' images come from; null: the deployment takes no images. */
  images?: ImageSource | null;
  /** The most choices one request may ask for (llama.cpp's server: its slots); null: the upstream decides. */
  maxChoices?: number | null;
  /** Keep connections open between requests (not to llama.cpp's server, which closes them after a stream). */
  keepAlive?: boolean;
  /** How long the upstream may send nothing before the request fails (and is retried). */
  idleTimeoutMs?: number;
  /** How errors name the upstream. */
  name?: string;
  /**
   * Split `<think>…</think>` out of chat replies' text as reasoning, here rather than upstream (whose
   * parser may not know the template); `opensThought`: the template's generation prompt opens the
   * segment. Absent: reasoning is what the upstream sends as such.
   */
  thoughts?: { opensThought: boolean };
}

/** Per choice, what the stream has said so far. */
interface ChoiceProgress {
  tokens: number;
  finishReason?: FinishReason;
  /** The stop string the upstream says ended the choice. */
  stopString?: string;
  /** Splits the thought segment out of the text, when this engine does. */
  thoughts?: ReasoningSplitter;
  calls: ToolCallIndexes;
}

/**
 * Generates through an OpenAI-compatible server (vLLM, SGLang, llama.cpp's server, ...): each job is one
 * streamed `/chat/completions` (or `/completions`, for raw prompts) request, whose chunks become output
 * pieces as they arrive. A reply to continue is sent as a trailing assistant turn the model goes on from.
 * The request is aborted with the job's signal, which the upstream sees as its client leaving.
 */
export class OpenAiUpstreamEngine implements GenerationEngine {
  /** A reply is continued from its text, unless reasoning is split out of it here (as in process). */
  readonly continuesReplies: boolean;
  private readonly http: UpstreamHttp;
  private readonly dialect: UpstreamDialect;
  private readonly name: string;

  constructor(private readonly options: OpenAiUpstreamEngineOptions) {
    this.dialect = options.dialect ?? 'openai';
    this.continuesReplies = !options.thoughts;
    this.name = options.name ?? `The upstream at ${options.url}`;
    this.http = new UpstreamHttp(new URL(options.url), {
      keepAlive: options.keepAlive ?? true,
      idleTimeoutMs: options.idleTimeoutMs ?? 10 * 60_000,
    });
  }

  /** `extra`: fields added to the request's body as they are (a llama-server's `cache_prompt`, say). */
  async generate(
    request: GenerateRequest,
    callbacks: GenerateCallbacks,
    extra: Readonly<Record<string, unknown>> = {},
  ): Promise<GenerateResult> {
    const n = request.n ?? 1;
    const choices = (request.prompts?.length ?? 1) * n;
    const max = this.options.maxChoices;
    if (max != null && choices > max) {
      throw new EngineInputError(
        `${choices} choices asked for; this deployment generates at most ${max} at once.`,
        'invalid_value',
      );
    }
    const sent = request.continueFrom?.tokens ?? 0;
    if (request.maxTokens !== undefined && request.maxTokens - sent <= 0) {
      // What was sent already used the whole budget: nothing is left to ask the upstream for.
      callbacks.onStart(0);
      return {
        finishReason: 'length',
        finishReasons: Array<FinishReason>(choices).fill('length'),
        usage: { promptTokens: 0, completionTokens: sent },
        aborted: false,
      };
    }

    const chat = !request.prompts;
    const body = {
      ...(chat
        ? chatRequestBody(request, this.options.model, this.dialect, await this.imageUris(request))
        : completionRequestBody(request, this.options.model, this.dialect)),
      ...extra,
    };
    const headers: Record<string, string> = this.options.apiKey
      ? { authorization: `Bearer ${this.options.apiKey}` }
      : {};

    const thoughts = chat ? this.options.thoughts : undefined;
    const progress: ChoiceProgress[] = Array.from({ length: choices }, () => ({
      tokens: 0,
      thoughts: thoughts ? new ReasoningSplitter(thoughts.opensThought) : undefined,
      calls: new ToolCallIndexes(),
    }));
    let usage: TokenUsage | undefined;
    let started = false;
    const start = (promptTokens: number) => {
      if (started) return;
      started = true;
      callbacks.onStart(promptTokens);
    };

    try {
      const answer = await this.http.post(
        chat ? '/chat/completions' : '/completions',
        JSON.stringify(body),
        headers,
        request.signal,
      );
      if (answer.status !== 200)
        throw upstreamFailure(answer.status, jsonOrText(await readText(answer.body)), this.name);
      const parser = new SseParser();
      let done = false;
      const handle = (data: string) => {
        const chunk = parseChunk(data);
        if (!chunk) {
          done = true;
          return;
        }
        if (chunk.error) throw upstreamFailure(chunk.error.status, chunk.error.body, this.name);
        start(chunk.promptTokens ?? 0);
        this.emit(chunk, progress, { sent, alternatives: request.logprobs ?? 0 }, callbacks);
        if (chunk.usage) usage = addUsage(usage, chunk.usage);
      };
      for await (const bytes of answer.body) {
        for (const data of parser.push(bytes as Buffer)) handle(data);
        if (done) break;
      }
      if (!done) for (const data of parser.end()) handle(data);
      if (request.signal?.aborted) return replyResult(progress, usage, sent, true, request.stop);
      const unfinished = progress.findIndex((p) => p.finishReason === undefined);
      if (unfinished >= 0)
        throw new UpstreamError(`${this.name} ended its stream before choice ${unfinished} finished`);
    } catch (err) {
      if (request.signal?.aborted) return replyResult(progress, usage, sent, true, request.stop);
      if (err instanceof EngineInputError || err instanceof UpstreamError) throw err;
      throw new UpstreamError(`${this.name} failed: ${(err as Error).message}`);
    }
    start(usage?.promptTokens ?? 0);
    return replyResult(progress, usage, sent, false, request.stop);
  }

  /**
   * Turns one chunk's choices into output pieces, in reply order: reasoning and text, then tool calls.
   * `sent`: tokens an earlier attempt generated; `alternatives`: how many each token's log-probability lists.
   */
  private emit(
    chunk: Chunk,
    progress: ChoiceProgress[],
    { sent, alternatives }: { sent: number; alternatives: number },
    callbacks: GenerateCallbacks,
  ): void {
    for (const c of chunk.choices) {
      const state = progress[c.index];
      if (!state) throw new UpstreamError(`${this.name} sent choice ${c.index}, which was not asked for`);
      const produced = !!(c.text || c.reasoning || c.toolCalls.length || c.logprobs.length);
      // The upstream's own count where it gives one; else a chunk per token, as llama.cpp and vLLM stream.
      if (c.generated !== undefined) state.tokens = Math.max(state.tokens, c.generated);
      else if (produced) state.tokens += Math.max(1, c.logprobs.length);
      const tokens = sent + state.tokens;
      let reasoning = c.reasoning ?? '';
      let text = c.text ?? '';
      if (state.thoughts) {
        const split = state.thoughts.push(text);
        const rest = c.finishReason ? state.thoughts.flush() : { reasoning: '', content: '' };
        reasoning += split.reasoning + rest.reasoning;
        text = split.content + rest.content;
      }
      if (text || reasoning || c.logprobs.length) {
        callbacks.onOutput({
          choice: c.index,
          ...(reasoning ? { reasoning } : {}),
          text,
          ...(c.logprobs.length
            ? { logprobs: c.logprobs.map((lp) => ({ ...lp, top: lp.top.slice(0, alternatives) })) }
            : {}),
          tokens,
        });
      }
      for (const call of c.toolCalls) callbacks.onOutput({ choice: c.index, toolCall: state.calls.next(call), tokens });
      if (c.finishReason) state.finishReason = c.finishReason;
      if (c.stopString) state.stopString = c.stopString;
    }
  }

  /** Each image of the request as a data: URI, by its hash; an image is read once however often it appears. */
  private async imageUris(request: GenerateRequest): Promise<Map<string, string>> {
    const refs = new Map<string, ImageRef>();
    for (const turn of request.messages)
      for (const part of turn.parts ?? []) if (part.type === 'image') refs.set(part.image.sha256, part.image);
    if (!refs.size) return new Map();
    const images = this.options.images;
    if (!images) throw new EngineInputError('This deployment takes no images.', 'invalid_value', 'messages');
    const entries = await Promise.all(
      [...refs.values()].map(
        async (ref) => [ref.sha256, `data:${ref.mime};base64,${(await images.read(ref)).toString('base64')}`] as const,
      ),
    );
    return new Map(entries);
  }

  async dispose(): Promise<void> {
    this.http.close();
  }
}

/** Several usage chunks (llama.cpp's server sends one per choice) add up; the prompt counts once. */
function addUsage(total: TokenUsage | undefined, next: ChunkUsage): TokenUsage {
  if (!total) return { ...next };
  return {
    promptTokens: Math.max(total.promptTokens, next.promptTokens),
    completionTokens: total.completionTokens + next.completionTokens,
    cachedTokens:
      total.cachedTokens === undefined && next.cachedTokens === undefined
        ? undefined
        : Math.max(total.cachedTokens ?? 0, next.cachedTokens ?? 0),
  };
}

/**
 * The reply's result. A reply stopped by its signal costs what the stream told so far; a finished one
 * what the upstream's usage says, where it sent one. `sent` counts the tokens of an earlier attempt.
 * `stops`: the request's stop strings; a finished choice ended by one names it where the upstream said
 * which. Where it does not (OpenAI's API), which one matched stays unknown and the choice names none:
 * the text cannot tell, since the stop string is cut from it, and a reply ending there may as well have
 * ended on the model's own end of turn.
 */
function replyResult(
  progress: ChoiceProgress[],
  usage: TokenUsage | undefined,
  sent: number,
  aborted: boolean,
  stops: readonly string[],
): GenerateResult {
  const finishReasons = progress.map((p) => p.finishReason ?? 'stop');
  const generated = (aborted ? undefined : usage?.completionTokens) ?? progress.reduce((sum, p) => sum + p.tokens, 0);
  return {
    finishReason: finishReasons[0]!,
    finishReasons,
    ...(!aborted
      ? requestedStops(
          progress.map((p) => (p.finishReason === 'stop' ? p.stopString : undefined)),
          stops,
        )
      : {}),
    usage: {
      promptTokens: usage?.promptTokens ?? 0,
      completionTokens: sent + generated,
      ...(usage?.cachedTokens !== undefined ? { cachedTokens: usage.cachedTokens } : {}),
    },
    aborted,
  };
}
