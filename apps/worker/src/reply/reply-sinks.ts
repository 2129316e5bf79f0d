import { Injectable } from '@nestjs/common';
import type { QueuedJobData, SentReply } from '@conveyor/queue';
import { BatchLineSink } from '../batch/batch-line.sink.js';
import { BatchResultSink } from '../batch/batch-result-sink.port.js';
import { ReplyPublisherFactory } from './reply-publisher.port.js';
import type { ReplySink } from './reply-sink.js';

/** Picks where a job's reply goes: a batch line's to its batch's results, any other to its client's reply stream. */
@Injectable()
export class ReplySinks {
  constructor(
    private readonly publishers: ReplyPublisherFactory,
    private readonly batchResults: BatchResultSink,
  ) {}

  /** The sink for attempt `attempt` of the job. */
  open(data: QueuedJobData, attempt: number): ReplySink {
    const { requestId, deployment: model, batch } = data;
    if (batch) return new BatchLineSink(this.batchResults, { ref: batch, requestId, model });
    return this.publishers.open(requestId, attempt);
  }

  /**
   * What earlier attempts of the job already sent its client, for a retry to continue from; null
   * on a first attempt, and for a batch line, which no client reads as it comes: its retry starts over.
   */
  async sent(data: QueuedJobData, attempt: number): Promise<SentReply | null> {
    if (attempt <= 1 || data.batch) return null;
    return this.publishers.replay(data.requestId);
  }
}
