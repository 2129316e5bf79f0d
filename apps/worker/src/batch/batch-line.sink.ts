import type { OutputPiece } from '@conveyor/engine';
import { ReplyAccumulator, type BatchLineRef, type Tokenized } from '@conveyor/queue';
import type { ReplyEnding, ReplySink } from '../reply/reply-sink.js';
import type { BatchResultSink } from './batch-result-sink.port.js';

/** The job a batch line runs as: its batch's reference, its job id and the deployment it ran on. */
export interface BatchLineJob {
  ref: BatchLineRef;
  requestId: string;
  model: string;
}

/**
 * One attempt at a batch line. No client reads the reply as it comes, so it is gathered whole
 * (into what a client would have collected from the reply stream) and handed to the batch as
 * one result when it ends or fails; an attempt that does neither hands over nothing.
 */
export class BatchLineSink implements ReplySink {
  private readonly reply = new ReplyAccumulator();

  constructor(
    private readonly results: BatchResultSink,
    private readonly job: BatchLineJob,
  ) {}

  start(): void {}

  output({ choice, ...piece }: OutputPiece): void {
    this.reply.add(choice, piece);
  }

  embedding(index: number, vector: string): void {
    this.reply.embedding(index, vector);
  }

  tokens(tokenized: Tokenized): void {
    this.reply.tokens(tokenized);
  }

  async end({ finishReasons, usage, stopSequences }: ReplyEnding): Promise<void> {
    const { ref, requestId, model } = this.job;
    const reply = this.reply.finish(finishReasons, usage, stopSequences);
    await this.results.push(ref.batchId, {
      ok: true,
      customId: ref.customId,
      line: ref.line,
      requestId,
      model,
      reply,
      ...(ref.view ? { view: ref.view } : {}),
    });
  }

  /** A batch line's error is written without `param`: the output file's error body always has it null. */
  async fail(status: number, code: string, message: string): Promise<void> {
    const { ref, requestId, model } = this.job;
    await this.results.push(ref.batchId, {
      ok: false,
      customId: ref.customId,
      line: ref.line,
      requestId,
      model,
      status,
      code,
      message,
    });
  }
}
