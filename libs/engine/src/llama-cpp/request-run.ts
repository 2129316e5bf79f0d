import type { LlamaModel } from 'node-llama-cpp';
import type { FinishReason } from '@conveyor/queue';
import type { GenerateCallbacks, GenerateRequest, GenerateResult } from '../core/generation-engine.js';
import { requestedStops } from '../core/stop-matcher.js';
import { LlamaReply } from './llama-reply.js';
import type { ReplyOutcome } from './reply-plan.js';
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
      const reply = new LlamaReply(at.model, lease.sequenceId, {
        ...choice.reply,
        prompt: choice.prompt.tokens,
        reused: reused[index],
        progressed: (position) => lease.progressed(position),
        signal: request.signal,
        emit: (piece) =>
          callbacks.onOutput({
            choice: index,
            ...piece,
            tokens: piece.tokens === undefined ? undefined : sentTokens + piece.tokens,
          }),
      });
      if (await reply.open()) at.loop.add(reply);
      return reply.outcome.then((outcome) => (outcomes[index] = outcome));
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
