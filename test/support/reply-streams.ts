import type { OutputPiece } from '@conveyor/engine';
import type { PlatformConfig } from '@conveyor/config';
import type { FinishReason, ReplyEvent, SentReply, TokenUsage, Tokenized } from '@conveyor/queue';
import type { ReplyEnding, ReplySink } from '../../apps/worker/src/reply/reply-sink.js';
import { ReplyStreams, type ReplyAddress } from '../../apps/worker/src/reply/reply-streams.port.js';

/** What the worker's sinks read of the platform config: the key prefix. */
export const REPLY_CONFIG = { redis: { prefix: 'test' } } as PlatformConfig;

/** What a reply's sink was asked to write, in order. */
export type Published =
  | { type: 'start'; promptTokens: number; resumed: boolean }
  | { type: 'output'; piece: OutputPiece }
  | { type: 'embedding'; index: number; vector: string }
  | { type: 'tokens'; tokenized: Tokenized }
  | { type: 'end'; finishReasons: FinishReason[]; usage: TokenUsage }
  | { type: 'fail'; status: number; code: string; message: string };

/** A sink that records every call, in order. */
export class RecordingSink implements ReplySink {
  constructor(readonly events: Published[] = []) {}

  start(promptTokens: number, resumed: boolean): void {
    this.events.push({ type: 'start', promptTokens, resumed });
  }

  output(piece: OutputPiece): void {
    this.events.push({ type: 'output', piece });
  }

  embedding(index: number, vector: string): void {
    this.events.push({ type: 'embedding', index, vector });
  }

  tokens(tokenized: Tokenized): void {
    this.events.push({ type: 'tokens', tokenized });
  }

  async end({ finishReasons, usage }: ReplyEnding): Promise<void> {
    this.events.push({ type: 'end', finishReasons: [...finishReasons], usage });
  }

  async fail(status: number, code: string, message: string): Promise<void> {
    this.events.push({ type: 'fail', status, code, message });
  }
}

/** The events that tell a reader `sent`: a start, its text as one delta, and its end when it ended. */
function eventsOf(sent: SentReply): ReplyEvent[] {
  const events: ReplyEvent[] = [{ type: 'start', attempt: 1, seq: 0, promptTokens: 0, resumed: false }];
  if (sent.text) events.push({ type: 'delta', attempt: 1, seq: 1, text: sent.text, tokens: sent.tokens });
  if (sent.ended)
    events.push({
      type: 'end',
      attempt: 1,
      seq: events.length,
      finishReason: 'stop',
      usage: { promptTokens: 0, completionTokens: sent.tokens },
    });
  return events;
}

/** Reply streams in memory: what earlier attempts sent, and a recording sink per attempt. */
export class RecordingReplyStreams extends ReplyStreams {
  readonly opened: { requestId: string; attempt: number; publisher: RecordingSink }[] = [];
  /** What earlier attempts sent each request's client. */
  readonly sent = new Map<string, SentReply>();
  /** Every call to any sink, in order. */
  readonly written: Published[] = [];

  async history({ requestId }: ReplyAddress): Promise<ReplyEvent[]> {
    return eventsOf(this.sent.get(requestId) ?? { text: '', tokens: 0, ended: false });
  }

  open({ requestId }: ReplyAddress, attempt: number): ReplySink {
    const publisher = new RecordingSink();
    const written = this.written;
    const push = publisher.events.push.bind(publisher.events);
    publisher.events.push = (...events: Published[]) => {
      written.push(...events);
      return push(...events);
    };
    this.opened.push({ requestId, attempt, publisher });
    return publisher;
  }

  /** Round ends the processor passed on from the engines. */
  rounds = 0;

  roundEnded(): void {
    this.rounds++;
  }

  /** Everything published for a request, over all its attempts. */
  events(requestId: string): Published[] {
    return this.opened.filter((o) => o.requestId === requestId).flatMap((o) => o.publisher.events);
  }
}
