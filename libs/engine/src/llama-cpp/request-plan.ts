import { randomInt } from 'node:crypto';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { EngineInputError, type GenerateRequest } from '../core/generation-engine.js';
import { ReasoningSplitter } from '../core/reasoning-splitter.js';
import type { ReplyPlan, ReplyShape } from './reply-plan.js';
import { toSamplingOptions } from './llama-options.js';
import { assertPromptCouldFit, promptChars } from './prompt-bound.js';
import type { PromptRenderer, RenderedPrompt } from './prompt-renderer.js';
import type { ReplyShapes } from './reply-shapes.js';
import { requestBiases } from './token-biases.js';

/** One choice as planned: the prompt it answers, and all its reply needs but the sequence it runs on. */
export interface ChoicePlan {
  prompt: RenderedPrompt;
  reply: Omit<ReplyPlan, 'prompt' | 'reused' | 'progressed' | 'signal' | 'emit'>;
}

/** A request checked and planned, before anything runs: its prompts and every choice's reply. */
export interface RequestPlan {
  prompts: RenderedPrompt[];
  /** Choices per prompt (the request's n). */
  n: number;
  /** The prompts' tokens, as usage counts them. */
  promptTokens: number;
  /** Tokens of the continued reply already sent, counted as generated. */
  sentTokens: number;
  /** Prompt by prompt, each prompt's n choices. */
  choices: ChoicePlan[];
  /** No prompt leaves room for a token: every choice ends with `length` before it starts. */
  noRoom: boolean;
}

/** What a request is planned against: the model, its context, and what the engine worked out at load. */
export interface PlanningContext {
  model: LlamaModel;
  /** Tokens per sequence. */
  contextSize: number;
  /** The most choices one request may run at once. */
  sequences: number;
  /** The most characters one token stands for. */
  longestToken: number;
  /** The model's end-of-generation tokens: ignore_eos and min_tokens ban them. */
  eogTokens: readonly Token[];
  reasoningParser: 'think' | null;
  renderer: PromptRenderer;
  shapes: ReplyShapes;
}

/**
 * Renders a request's prompts, checks them against the context and the request's budget and choices,
 * and plans each choice's reply: its shape, biases and seed. Throws EngineInputError for input no retry fixes.
 */
export async function planRequest(request: GenerateRequest, at: PlanningContext): Promise<RequestPlan> {
  const partial = request.continueFrom?.text ?? '';
  assertPromptCouldFit(promptChars(request, partial), at.contextSize, at.longestToken);
  const prompts = request.prompts
    ? request.prompts.map((p) => at.renderer.text(p))
    : [at.renderer.chat(request, partial)];
  const contextSize = at.contextSize;
  for (const prompt of prompts) {
    const asked = request.maxTokens === undefined ? '' : ` and max_tokens ${request.maxTokens}`;
    // A budget clamped to the context leaves the prompt alone to fit; the budget below is then the room left.
    const asks = request.clampToContext ? 0 : (request.maxTokens ?? 0);
    if (prompt.tokens.length >= contextSize || prompt.promptTokens + asks > contextSize) {
      throw new EngineInputError(
        `The prompt is ${prompt.promptTokens} tokens${asked}, which does not fit this model's context of ${contextSize} tokens.`,
        'context_length_exceeded',
      );
    }
  }
  const n = request.n ?? 1;
  const choices = prompts.length * n;
  if (choices > at.sequences) {
    throw new EngineInputError(
      `${choices} choices asked for; this deployment generates at most ${at.sequences} at once.`,
      'invalid_value',
    );
  }
  // A resumed reply counts the tokens already sent against max_tokens and in usage, as they were generated.
  const sentTokens = request.continueFrom?.tokens ?? 0;
  // Never past the context: a reply that fills it ends with "length" instead of shifting context forever.
  const budgetFor = (p: RenderedPrompt) =>
    Math.min((request.maxTokens ?? Infinity) - sentTokens, contextSize - p.tokens.length);
  const chat = !request.prompts;
  const shape: ReplyShape = chat ? await at.shapes.shape(request, budgetFor(prompts[0]!)) : { kind: 'text' };
  const minTokens = request.sampling.ignoreEos ? Infinity : (request.sampling.minTokens ?? 0);
  const ending = [...new Set([...at.eogTokens, ...prompts.flatMap((p) => [...p.endTokens])])];
  const bias = requestBiases(at.model, request.sampling.logitBias, ending, minTokens > 0);
  const seed = request.sampling.seed ?? randomInt(2 ** 31);
  const planned = Array.from({ length: choices }, (_, index): ChoicePlan => {
    const prompt = prompts[Math.floor(index / n)]!;
    return {
      prompt,
      reply: {
        budget: budgetFor(prompt),
        stops: [...request.stop, ...prompt.stops],
        endTokens: request.sampling.ignoreEos ? new Set() : prompt.endTokens,
        // Each choice samples on its own seed, so n choices differ and each one repeats with the request's seed.
        evaluate: (recent) => toSamplingOptions({ ...request.sampling, seed: seed + index }, recent),
        bias,
        minTokens,
        logprobs: request.logprobs,
        shape,
        reasoning: chat && at.reasoningParser ? new ReasoningSplitter(prompt.opensThought) : undefined,
      },
    };
  });
  return {
    prompts,
    n,
    promptTokens: prompts.reduce((sum, p) => sum + p.promptTokens, 0),
    sentTokens,
    choices: planned,
    noRoom: prompts.every((p) => budgetFor(p) <= 0),
  };
}
