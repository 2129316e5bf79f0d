import { describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import type { GenerationJobData } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ClientGone } from './reply-reader.js';
import { drain } from '../../../../test/support/drain.js';
import {
  QUEUE_TIMEOUT_MS,
  RESUMED,
  delta,
  end,
  keyOf,
  observations,
  start,
  useGenerationHarness,
} from '../../../../test/support/generation-service.js';
import { rejection } from '../../../../test/support/rejection.js';

describe('GenerationService', () => {
  const t = useGenerationHarness();

  describe('resume', () => {
    const waitingJob = (requestId: string): GenerationJobData => ({
      requestId,
      deployment: 'beta',
      messages: [{ role: 'user', content: 'Hi' }],
      sampling: { temperature: 0 },
      stop: [],
      enqueuedAt: 1_700_000_000_500,
      owner: 'anonymous',
      replyTo: 'replica-2',
    });
    const REQUEST_ID = '0b9e8c44-8f0a-4c1e-9a57-1b2c3d4e5f60';

    it('refuses an id that is not one of its replies with 400', async () => {
      for (const id of ['chatcmpl-not-a-request', `cmpl-${REQUEST_ID}`, REQUEST_ID, 'chatcmpl-']) {
        const error = (await rejection(t.service.resume(id, RESUMED, 'anonymous', t.client.signal))) as OpenAiHttpError;
        expect(error).toBeInstanceOf(OpenAiHttpError);
        expect(error).toMatchObject({
          status: 400,
          type: 'invalid_request_error',
          param: 'completion_id',
          code: ErrorCode.invalidCompletionId,
        });
      }
      expect(t.relay.subscribed).toEqual([]);
    });

    it('refuses an id the queue does not know with 404', async () => {
      const error = (await rejection(
        t.service.resume(`chatcmpl-${REQUEST_ID}`, RESUMED, 'anonymous', t.client.signal),
      )) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 404, type: 'not_found_error', code: ErrorCode.completionNotFound });
      expect(error.message).toContain(`chatcmpl-${REQUEST_ID}`);
      expect(t.relay.subscribed).toEqual([]);
    });

    it("answers another caller's reply exactly as an unknown one: 404", async () => {
      t.queue.remember(waitingJob(REQUEST_ID));
      const error = (await rejection(
        t.service.resume(`chatcmpl-${REQUEST_ID}`, RESUMED, 'team-b', t.client.signal),
      )) as OpenAiHttpError;
      expect(error).toMatchObject({ status: 404, code: ErrorCode.completionNotFound });
      expect(t.relay.subscribed).toEqual([]);
    });

    it('follows a known reply under its original identity, and the queue deadline never ends it', async () => {
      // Queued through another replica and still waiting: just what a queue deadline would withdraw.
      await t.queue.enqueue(waitingJob(REQUEST_ID));
      const run = await t.service.resume(`chatcmpl-${REQUEST_ID}`, RESUMED, 'anonymous', t.client.signal);
      expect(run.who).toEqual({ id: `chatcmpl-${REQUEST_ID}`, model: 'beta', created: 1_700_000_000, tier: 'default' });
      // Read from the replica its job named, since the job was queued.
      expect(t.relay.followed).toEqual([{ requestId: REQUEST_ID, replica: 'replica-2', since: 1_700_000_000_500 }]);
      const next = run.events.next();
      await jest.advanceTimersByTimeAsync(QUEUE_TIMEOUT_MS * 10);
      expect(t.queue.withdrawn).toEqual([]);
      expect(t.queue.isWaiting(REQUEST_ID)).toBe(true);
      expect(t.queue.cancelled).toEqual([]);
      t.relay.write(keyOf(REQUEST_ID), [start, delta('Hi', 1), end(2)]);
      expect(await next).toEqual({ value: start, done: false });
      expect(await drain(run.events)).toEqual([delta('Hi', 1), end(2)]);
      expect(t.queue.cancelled).toEqual([]);
      // The replica that queued the request timed it; a resumed reply is not timed twice.
      expect(await observations(t.metrics.queueWait, 'beta')).toBe(0);
    });

    it('cancels the job when a resuming client leaves', async () => {
      t.queue.remember(waitingJob(REQUEST_ID));
      const run = await t.service.resume(`chatcmpl-${REQUEST_ID}`, RESUMED, 'anonymous', t.client.signal);
      const pending = rejection(run.events.next());
      t.client.abort();
      expect(await pending).toBeInstanceOf(ClientGone);
      expect(t.queue.cancelled).toEqual([{ deployment: 'beta', requestId: REQUEST_ID }]);
    });
  });
});
