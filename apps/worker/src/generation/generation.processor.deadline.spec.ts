import { describe, expect, it } from '@jest/globals';
import { UnrecoverableError } from 'bullmq';
import { ErrorCode } from '@conveyor/openai';
import {
  REQUEST_ID,
  USAGE,
  chatJob,
  jobOf,
  saying,
  useProcessorWithStandIns,
} from '../../../../test/support/generation-processor.js';
import { rejection } from '../../../../test/support/rejection.js';

describe('GenerationProcessor and a request deadline', () => {
  const t = useProcessorWithStandIns();

  it('runs nothing for a job taken after its deadline: the engine is never called, its reader told 504', async () => {
    t.engine.generation = saying('never', 'said');
    const enqueuedAt = Date.now() - 5000;
    const { job } = jobOf(chatJob({ enqueuedAt, deadlineAt: enqueuedAt + 1000 }));
    const error = await rejection(t.processor.handle(job, 'token-1', undefined));
    expect(error).toBeInstanceOf(UnrecoverableError);
    expect(t.engine.requests).toHaveLength(0);
    const events = t.publishers.events(REQUEST_ID);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'fail', status: 504, code: ErrorCode.deadlineExceeded });
    expect(JSON.stringify(events[0])).toMatch(/deadline passed after \d+ ms in the queue/);
    expect(t.cancellation.tracked).toEqual([]);
  });

  it('runs a job taken before its deadline as any other', async () => {
    t.engine.generation = saying('in', 'time');
    const { job } = jobOf(chatJob({ deadlineAt: Date.now() + 60_000 }));
    expect(await t.processor.handle(job, 'token-1', undefined)).toEqual({ finishReason: 'stop', usage: USAGE });
    expect(t.engine.requests).toHaveLength(1);
  });
});
