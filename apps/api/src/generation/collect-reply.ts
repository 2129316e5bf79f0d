import { ReplyAccumulator, type ReplyResult } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { ReplyRun } from '../contracts/reply-run.js';

/** Gathers a run's events into the finished reply; a retry that starts over replaces what came before. */
export async function collectReply(run: ReplyRun): Promise<ReplyResult> {
  const reply = new ReplyAccumulator();
  for await (const event of run.events) {
    const result = reply.apply(event);
    if (result) return result;
  }
  throw OpenAiHttpError.unavailable('The reply ended before it was complete.');
}
