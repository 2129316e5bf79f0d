import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { BatchLineResult, GenerationJobData, ImageRef, QueuedJobData } from '@conveyor/queue';
import { BatchResultSink } from '../batch/batch-result-sink.port.js';
import { ImageReleaser } from '../images/image-releaser.port.js';
import { ReplySinks } from './reply-sinks.js';
import { UnrunFailures } from './unrun-failures.js';
import { RecordingReplyStreams, REPLY_CONFIG } from '../../../../test/support/reply-streams.js';

class FakeBatchResults extends BatchResultSink {
  readonly pushed: { batchId: string; result: BatchLineResult }[] = [];
  failing = false;

  async push(batchId: string, result: BatchLineResult): Promise<void> {
    if (this.failing) throw new Error('Redis is gone');
    this.pushed.push({ batchId, result });
  }
}

class RecordingReleaser extends ImageReleaser {
  readonly released: { jobId: string; sha256s: readonly string[] }[] = [];

  async release(jobId: string, sha256s: readonly string[]): Promise<void> {
    this.released.push({ jobId, sha256s });
  }
}

const image: ImageRef = { sha256: 'c'.repeat(64), mime: 'image/png', bytes: 1, width: 1, height: 1 };
const STALLED = 'job stalled more than allowable limit';

const jobOf = (data: QueuedJobData): Job<QueuedJobData> =>
  ({ id: data.requestId, data, attemptsStarted: 3, deferredFailure: STALLED }) as unknown as Job<QueuedJobData>;

const chat = (extra: Partial<GenerationJobData> = {}): GenerationJobData => ({
  requestId: 'req-1',
  deployment: 'alpha',
  messages: [{ role: 'user', content: 'look', parts: [{ type: 'image', image }] }],
  sampling: { temperature: 0 },
  stop: [],
  enqueuedAt: 0,
  replyTo: 'replica-1',
  ...extra,
});

beforeAll(() => Logger.overrideLogger(false));

describe('UnrunFailures: a job BullMQ failed on fetch, after the workers that ran it died', () => {
  let streams: RecordingReplyStreams;
  let batchResults: FakeBatchResults;
  let releaser: RecordingReleaser;
  let unrun: UnrunFailures;

  beforeEach(() => {
    streams = new RecordingReplyStreams();
    batchResults = new FakeBatchResults();
    releaser = new RecordingReleaser();
    unrun = new UnrunFailures(releaser, new ReplySinks(REPLY_CONFIG, streams, batchResults));
  });

  it('releases its images and hands a batch line’s failure to the batch, the only report it gets', async () => {
    const batch = { batchId: 'batch_0123456789abcdef01234567', customId: 'line-k', line: 7 };
    const requestId = `${batch.batchId}-${batch.line}`;
    await unrun.failed(jobOf(chat({ requestId, batch })), STALLED);
    expect(releaser.released).toEqual([{ jobId: requestId, sha256s: [image.sha256] }]);
    expect(batchResults.pushed).toEqual([
      {
        batchId: batch.batchId,
        result: {
          ok: false,
          customId: 'line-k',
          line: 7,
          requestId,
          model: 'alpha',
          status: 500,
          code: 'generation_failed',
          message: `Generation failed: ${STALLED}`,
        },
      },
    ]);
  });

  it('names an embeddings line’s failure as one', async () => {
    const batch = { batchId: 'batch_0123456789abcdef01234567', customId: 'line-e', line: 1 };
    await unrun.failed(
      jobOf({ requestId: 'e-1', deployment: 'vectors', inputs: ['x'], enqueuedAt: 0, batch }),
      STALLED,
    );
    expect(batchResults.pushed.map((p) => p.result)).toEqual([
      expect.objectContaining({ ok: false, code: 'embedding_failed', message: `Embedding failed: ${STALLED}` }),
    ]);
  });

  it('tells a waiting client its reply failed, and releases its images', async () => {
    await unrun.failed(jobOf(chat()), STALLED);
    expect(releaser.released).toEqual([{ jobId: 'req-1', sha256s: [image.sha256] }]);
    // Its sink is its API replica's inbox, as the last attempt (3) would have written to it.
    expect(streams.opened.map(({ requestId, attempt }) => ({ requestId, attempt }))).toEqual([
      { requestId: 'req-1', attempt: 3 },
    ]);
    expect(streams.events('req-1')).toEqual([
      { type: 'fail', status: 500, code: 'generation_failed', message: `Generation failed: ${STALLED}` },
    ]);
    expect(batchResults.pushed).toEqual([]);
  });

  it('never throws: it runs from an event', async () => {
    batchResults.failing = true;
    const batch = { batchId: 'batch_0123456789abcdef01234567', customId: 'line-z', line: 2 };
    await expect(unrun.failed(jobOf(chat({ requestId: 'b-2', batch })), STALLED)).resolves.toBeUndefined();
  });
});
