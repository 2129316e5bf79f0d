import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { replayReply, replyInboxKey, type QueuedJobData, type SentReply } from '@conveyor/queue';
import { BatchLineSink } from '../batch/batch-line.sink.js';
import { BatchResultSink } from '../batch/batch-result-sink.port.js';
import type { ReplySink } from '../reply/reply-sink.js';
import { ReplyStreams } from '../reply/reply-streams.port.js';

/** A job attempt's sink, and what earlier attempts already sent its client (null on a first attempt, or a batch line). */
export interface OpenedSink {
  sink: ReplySink;
  sent: SentReply | null;
}

/** Picks where a job's reply goes: a batch line's to its batch's results, any other to its API replica's inbox. */
@Injectable()
export class ReplySinks {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly streams: ReplyStreams,
    private readonly batchResults: BatchResultSink,
  ) {}

  /** An engine round ended: the replies' sinks may write what it produced. */
  roundEnded(): void {
    this.streams.roundEnded();
  }

  /**
   * The sink for attempt `attempt` of the job. A retried reply first reads what earlier attempts
   * wrote, for the retry to continue from (a batch line, which no client reads as it comes, starts over).
   */
  async open(data: QueuedJobData, attempt: number): Promise<OpenedSink> {
    const { requestId, batch, replyTo } = data;
    // A batch line's result names the model its line did, alias or not.
    const model = data.model ?? data.deployment;
    if (batch) return { sink: new BatchLineSink(this.batchResults, { ref: batch, requestId, model }), sent: null };
    // Every job the API queues names its replica; one that does not was put on the queue by hand.
    if (!replyTo) throw new UnrecoverableError('The job names no API replica to send its reply to (replyTo).');
    const address = { inbox: replyInboxKey(this.config.redis.prefix, replyTo), requestId };
    const earlier = attempt > 1 ? await this.streams.history(address, data.enqueuedAt) : [];
    return {
      sink: this.streams.open(address, attempt, earlier),
      sent: attempt > 1 ? replayReply(earlier) : null,
    };
  }
}
