import type { LlamaModel } from 'node-llama-cpp';
import type { FinishReason } from '@conveyor/queue';
import {
  EngineOutputError,
  type GenerateCallbacks,
  type GenerateRequest,
  type GenerateResult,
  type OutputPiece,
} from '../core/generation-engine.js';
import type { SamplingOptions } from './llama-options.js';
import { requestedStops } from '../core/stop-matcher.js';
import { LlamaReply } from './llama-reply.js';
import type { ReplyOutcome, ReplyShape, WrittenCall } from './reply-plan.js';
import type { RequestPlan } from './request-plan.js';
import type { RoundLoop } from './round-loop.js';
import type { SequenceSlots } from './sequence-slots.js';

/** Where a planned request runs: the model, the context's sequences, and the loop that drives its replies. */
export interface RunContext {
  model: LlamaModel;
  slots: SequenceSlots;
  loop: RoundLoop;
}

/**
 * Runs a planned request: leases a sequence per choice, starts each choice's reply once its
 * sequence holds what it reuses, gathers the outcomes and counts usage. The leases go back when every
 * choice has settled, each with what its cells now hold.
 */
export async function runRequest(
  plan: RequestPlan,
  request: Pick<GenerateRequest, 'signal' | 'stop'>,
  callbacks: GenerateCallbacks,
  at: RunContext,
): Promise<GenerateResult> {
  const { prompts, n, sentTokens } = plan;
  const leases = await at.slots.acquire(plan.choices.map((choice) => choice.prompt.tokens));
  const outcomes: Array<ReplyOutcome | undefined> = [];
  const reused: number[] = [];
  // Set once the request is over (a choice failed): a choice still waiting to share cells starts nothing.
  let over = false;
  try {
    const replies = leases.map(async (lease, index) => {
      const choice = plan.choices[index]!;
      reused[index] = await lease.ready();
      if (over) throw new Error('The request ended before this choice started.');
      const send = (piece: Omit<OutputPiece, 'choice'>, before = 0) =>
        callbacks.onOutput({
          choice: index,
          ...piece,
          tokens: piece.tokens === undefined ? undefined : sentTokens + before + piece.tokens,
        });
      const run = async (from: number, seedShift: number, emit: (piece: Omit<OutputPiece, 'choice'>) => void) => {
        const reply = new LlamaReply(at.model, lease.sequenceId, {
          ...choice.reply,
          ...(seedShift ? { evaluate: (recent) => reseeded(choice.reply.evaluate(recent), seedShift) } : {}),
          prompt: choice.prompt.tokens,
          reused: from,
          progressed: (position) => lease.progressed(position),
          signal: request.signal,
          emit,
        });
        if (await reply.open()) at.loop.add(reply);
        return reply.outcome;
      };
      const check = replyCheck(choice.reply.shape);
      if (!check) return run(reused[index], 0, (piece) => send(piece)).then((o) => (outcomes[index] = o));
      // A reply its schema's check must see whole is held back until checked; one that fails runs again once.
      let spent = 0;
      for (let attempt = 0; ; attempt++) {
        const held: Array<Omit<OutputPiece, 'choice'>> = [];
        const outcome = await run(attempt ? choice.prompt.tokens.length - 1 : reused[index], attempt, (p) =>
          held.push(p),
        );
        outcomes[index] = outcome;
        const problem = outcome.aborted ? null : check(held);
        if (!problem || !outcome.cached) {
          held.forEach((p) => send(p, spent));
          return { ...outcome, generatedTokens: spent + outcome.generatedTokens };
        }
        if (attempt > 0)
          throw new EngineOutputError(
            `${choice.reply.shape.kind === 'tool' ? "The tool calls' arguments did not conform to their parameters" : 'The structured output did not conform to its schema'}, twice: ${problem}.`,
            'schema_not_met',
          );
        spent += outcome.generatedTokens;
        // The prompt stays in the cells; its last token is evaluated again to sample the new reply's first.
        await lease.rewind(choice.prompt.tokens.length - 1);
      }
    });
    const ended: ReplyOutcome[] = await Promise.all(replies).catch(async (err: unknown) => {
      // Every choice is settled before the leases go back, so none runs on a sequence given away.
      over = true;
      await Promise.allSettled(replies);
      throw err;
    });
    const finishReasons: FinishReason[] = ended.map((o) => o.finishReason);
    // Each prompt's first choice is where its reuse counts (the prompt is counted once in usage too). A
    // resumed reply's prompt also holds what was already sent, which usage does not count as prompt.
    const cachedTokens = prompts.reduce((sum, p, i) => sum + Math.min(reused[i * n] ?? 0, p.promptTokens), 0);
    return {
      finishReason: finishReasons[0]!,
      finishReasons,
      ...requestedStops(
        ended.map((o) => o.stopString),
        request.stop,
      ),
      usage: {
        promptTokens: plan.promptTokens,
        completionTokens: sentTokens + ended.reduce((sum, o) => sum + o.generatedTokens, 0),
        cachedTokens,
      },
      aborted: ended.some((o) => o.aborted),
      ...(at.slots.reusing ? { sequences: leases.map((lease) => lease.sequenceId) } : {}),
    };
  } finally {
    // A sequence whose reply failed holds cells nobody can name: it is emptied, never reused.
    leases.forEach((lease, index) => {
      const cached = outcomes[index]?.cached;
      lease.release(cached ? { tokens: cached, prompt: plan.choices[index]!.prompt.tokens.length } : null);
    });
  }
}

/** The same sampling on another seed, so that a reply run again is not the same reply. */
function reseeded(options: SamplingOptions, shift: number): SamplingOptions {
  return { ...options, seed: (options.seed ?? 0) + 7919 * shift };
}

type Held = Omit<OutputPiece, 'choice'>;

/**
 * What a reply is checked by once complete, where its shape has keywords the grammar cannot hold: a JSON
 * reply's text, or a reply's calls with their arguments joined. Undefined: the reply streams unchecked.
 */
function replyCheck(shape: ReplyShape): ((held: readonly Held[]) => string | null) | undefined {
  if (shape.kind === 'json' && shape.check) {
    const check = shape.check;
    return (held) => check(held.map((p) => p.text ?? '').join(''));
  }
  if (shape.kind === 'tool' && shape.call.check) {
    const check = shape.call.check;
    return (held) => check(writtenCalls(held));
  }
  return undefined;
}

/** The calls among a reply's pieces, in the order written, each call's argument deltas joined. */
function writtenCalls(held: readonly Held[]): WrittenCall[] {
  const calls: WrittenCall[] = [];
  for (const { toolCall } of held) {
    if (!toolCall) continue;
    const call = (calls[toolCall.index] ??= { name: '', arguments: '' });
    if (toolCall.name) call.name = toolCall.name;
    call.arguments += toolCall.arguments;
  }
  return calls.filter(Boolean);
}
