import type { FinishReason } from '@conveyor/queue';
import {
  EngineInputError,
  type GenerationEngine,
  type GenerateCallbacks,
  type GenerateRequest,
  type GenerateResult,
} from '../core/generation-engine.js';
import { requestedStops } from '../core/stop-matcher.js';
import { SimulatedReply, type SimulatedOutcome } from './simulated-reply.js';
import { SimulatedRounds } from './simulated-rounds.js';
import { SimulatedText, simulatedPromptTokens } from './simulated-text.js';
import { SequenceCount } from './sequence-count.js';

export interface SimulatedEngineOptions {
  /** Milliseconds from a job's start to its first token. */
  ttftMs: number;
  /** Milliseconds per token after the first: one round of every running reply. */
  tpotMs: number;
  /** Tokens of a reply whose request sets no max_tokens (and does not ignore the end). */
  outputTokens: number;
  /** What replies say, one word (with its leading space) per token, repeated. */
  text: string;
  /** Tokens of context per sequence: prompt and reply must fit, as on a real engine. */
  contextSize: number;
  /** Sequences: the choices that generate at once; more wait for one to free up. */
  sequences: number;
}

/**
 * Generates without a model, at a configured pace: the first token `ttftMs` after the job starts, then
 * one token each `tpotMs`, every running reply in the same round (see SimulatedRounds). Replies are the
 * configured text, exactly as long as max_tokens allows (usage counts them exactly), cut by stop strings;
 * prompt tokens are counted from bytes (BYTES_PER_PROMPT_TOKEN), not tokenized. For capacity and fault
 * tests of the platform around the engine: it costs the worker almost no CPU, so many run on one machine.
 */
export class SimulatedEngine implements GenerationEngine {
  readonly continuesReplies = true;
  private readonly text: SimulatedText;
  private readonly rounds: SimulatedRounds;
  private readonly sequences: SequenceCount;
  private readonly running = new Set<SimulatedReply>();

  constructor(private readonly options: SimulatedEngineOptions) {
    this.text = new SimulatedText(options.text);
    this.rounds = new SimulatedRounds(options.tpotMs);
    this.sequences = new SequenceCount(options.sequences);
  }

  async generate(request: GenerateRequest, callbacks: GenerateCallbacks): Promise<GenerateResult> {
    const { contextSize } = this.options;
    const sent = request.continueFrom?.tokens ?? 0;
    const prompts = simulatedPromptTokens(request, request.continueFrom?.text);
    for (const prompt of prompts) {
      if (prompt >= contextSize || prompt + (request.clampToContext ? 0 : (request.maxTokens ?? 0)) > contextSize) {
        const asked = request.maxTokens === undefined ? '' : ` and max_tokens ${request.maxTokens}`;
        throw new EngineInputError(
          `The prompt is ${prompt} tokens${asked}, which does not fit this model's context of ${contextSize} tokens.`,
          'context_length_exceeded',
        );
      }
    }
    const n = request.n ?? 1;
    const choices = prompts.length * n;
    if (choices > this.options.sequences) {
      throw new EngineInputError(
        `${choices} choices asked for; this deployment generates at most ${this.options.sequences} at once.`,
        'invalid_value',
      );
    }
    const promptTokens = prompts.reduce((sum, p) => sum + p, 0);
    callbacks.onStart(promptTokens);

    await this.sequences.acquire(choices);
    try {
      // The time to first token runs from when the request has its sequences, as on a real engine.
      const firstDueAt = Date.now() + this.options.ttftMs;
      const natural = request.sampling.ignoreEos
        ? Infinity
        : Math.max(this.options.outputTokens, request.sampling.minTokens ?? 0) - sent;
      const replies = Array.from({ length: choices }, (_, choice) => {
        const prompt = prompts[Math.floor(choice / n)]!;
        return new SimulatedReply({
          firstDueAt,
          text: this.text,
          sent,
          budget: Math.min((request.maxTokens ?? Infinity) - sent, contextSize - prompt),
          natural,
          stops: request.stop,
          logprobs: request.logprobs,
          emit: (piece) => callbacks.onOutput({ choice, ...piece }),
        });
      });
      const outcomes = await this.run(replies, request.signal);
      const finishReasons: FinishReason[] = outcomes.map((o) => o.finishReason);
      return {
        finishReason: finishReasons[0]!,
        finishReasons,
        ...requestedStops(
          outcomes.map((o) => o.stopString),
          request.stop,
        ),
        usage: { promptTokens, completionTokens: sent + outcomes.reduce((sum, o) => sum + o.generatedTokens, 0) },
        aborted: outcomes.some((o) => o.aborted),
      };
    } finally {
      this.sequences.release(choices);
    }
  }

  /** Runs the replies in the rounds until each has ended, or the signal stops them all. */
  private async run(replies: SimulatedReply[], signal: AbortSignal | undefined): Promise<SimulatedOutcome[]> {
    const abort = () => replies.forEach((r) => r.abort());
    if (signal?.aborted) abort();
    signal?.addEventListener('abort', abort, { once: true });
    for (const reply of replies) {
      this.running.add(reply);
      this.rounds.add(reply);
    }
    try {
      return await Promise.all(replies.map((r) => r.outcome));
    } finally {
      signal?.removeEventListener('abort', abort);
      for (const reply of replies) {
        this.running.delete(reply);
        this.rounds.remove(reply);
      }
    }
  }

  async dispose(): Promise<void> {
    this.rounds.stop();
    for (const reply of this.running) reply.abort();
  }
}
