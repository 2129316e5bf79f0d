import type { OutputPiece } from '@conveyor/engine';
import {
  encodeReplyRecord,
  ReplyFence,
  type ReplyEvent,
  type Tokenized,
  type UnnumberedReplyEvent,
} from '@conveyor/queue';
import type { ReplyEnding, ReplySink } from './reply-sink.js';
import type { ReplyAddress } from './reply-streams.port.js';

type Pending = Omit<OutputPiece, 'choice'> & { text: string };

/** Within a reply, reasoning comes before text and text before a tool call; a coalesced event keeps that order. */
const rank = (piece: Omit<OutputPiece, 'choice'>): number =>
  piece.toolCall ? 2 : piece.text || piece.logprobs ? 1 : 0;

/** What one reply hands the outbox at a flush: its events since the last one and, once it has ended, its record. */
export interface OutboxEntry extends ReplyAddress {
  events: ReplyEvent[];
  /** The finished reply folded into one record (encodeReplyRecord), kept for a client to read it again. */
  record?: string;
}

/** The outbox as a reply's sink sees it: told when the reply holds events to write. */
export interface OutboxNotifier {
  /** `writer` holds events to write; `urgent` when they end its reply or hold its first output. */
  notify(writer: ReplyStreamSink, urgent: boolean): void;
}

/**
 * One attempt of a reply a client is reading, as events in its API replica's inbox. Output is held
 * until the worker's outbox flushes, and what one choice produced in that time becomes one event, so
 * a reply costs an event per flush, not per token. When the reply ends, its record is written too:
 * every event a reader relays (those of earlier attempts the fence keeps, then this attempt's), so
 * a client can read the reply again after its entries are gone from the inbox.
 *
 * After a write has failed, nothing more is written: a later write could succeed (Redis back, or
 * another primary after a failover) and leave a hole in the reply its client is reading. The attempt
 * ends with the error, and the job's retry continues from what was written.
 */
export class ReplyStreamSink implements ReplySink {
  private readonly pending = new Map<number, Pending>();
  private queued: ReplyEvent[] = [];
  private seq = 0;
  /** What the record will hold: the events of earlier attempts a reader keeps, then this attempt's. */
  private readonly kept: ReplyEvent[];
  private readonly fence = new ReplyFence();
  /** Embeddings are read once, never resumed: their (large) vectors get no record. */
  private recorded = true;
  private ending: { resolve(): void; reject(err: Error): void; taken: boolean } | null = null;
  private writeError: Error | null = null;
  /** Whether any output was held yet: the first is written at the end of its own round. */
  private outputSeen = false;

  constructor(
    private readonly outbox: OutboxNotifier,
    private readonly address: ReplyAddress,
    private readonly attempt: number,
    earlier: readonly ReplyEvent[],
  ) {
    this.kept = earlier.filter((event) => this.fence.accept(event));
  }

  start(promptTokens: number, resumed: boolean): void {
    this.flushChoices();
    this.queue({ type: 'start', attempt: this.attempt, promptTokens, resumed });
  }

  output({ choice, ...piece }: OutputPiece): void {
    if (this.writeError || this.ending) return;
    if (!piece.text && !piece.reasoning && !piece.toolCall && !piece.logprobs?.length) return;
    let held = this.pending.get(choice);
    const call = held?.toolCall;
    // A piece that would land before what is held (or a second call) goes in the next event instead.
    if (held && (rank(piece) < rank(held) || (piece.toolCall && call && piece.toolCall.index !== call.index))) {
      this.flushChoice(choice, held);
      held = undefined;
    }
    if (!held) this.pending.set(choice, (held = { text: '' }));
    if (piece.reasoning) held.reasoning = (held.reasoning ?? '') + piece.reasoning;
    if (piece.text) held.text += piece.text;
    if (piece.logprobs?.length) (held.logprobs ??= []).push(...piece.logprobs);
    if (piece.tokens !== undefined) held.tokens = piece.tokens;
    if (piece.toolCall)
      held.toolCall = held.toolCall
        ? { ...held.toolCall, arguments: held.toolCall.arguments + piece.toolCall.arguments }
        : { ...piece.toolCall };
    // The first token is what a client waits on longest (its time to first token): it is not held for the
    // next round, as later ones are.
    const first = !this.outputSeen;
    this.outputSeen = true;
    this.outbox.notify(this, first);
  }

  embedding(index: number, vector: string): void {
    this.recorded = false;
    this.flushChoices();
    this.queue({ type: 'embedding', attempt: this.attempt, index, vector });
  }

  /** Read once, never resumed: like embeddings, no record. */
  tokens({ tokens, maxModelLen, text }: Tokenized): void {
    this.recorded = false;
    this.flushChoices();
    this.queue({ type: 'tokens', attempt: this.attempt, tokens, maxModelLen, ...(text !== undefined ? { text } : {}) });
  }

  /** Resolves once the end (and the record) is written. */
  end({ finishReasons, usage, stopSequences }: ReplyEnding): Promise<void> {
    const many = finishReasons.length > 1 ? { finishReasons: [...finishReasons] } : {};
    // Written only when a stop sequence ended some choice: the end of every other reply stays as small as it was.
    const stops = stopSequences?.some((s) => s !== null) ? { stopSequences: [...stopSequences] } : {};
    return this.finish({
      type: 'end',
      attempt: this.attempt,
      finishReason: finishReasons[0] ?? 'stop',
      ...many,
      ...stops,
      usage,
    });
  }

  fail(status: number, code: string, message: string, param: string | null = null): Promise<void> {
    return this.finish({ type: 'error', attempt: this.attempt, status, code, message, ...(param ? { param } : {}) });
  }

  /** The events held since the last flush, with the record once the reply has ended; null when there are none. */
  take(): OutboxEntry | null {
    if (this.writeError) return null;
    this.flushChoices();
    const events = this.queued;
    this.queued = [];
    if (!events.length) return null;
    for (const event of events) if (this.fence.accept(event)) this.kept.push(event);
    const entry: OutboxEntry = { ...this.address, events };
    if (this.ending) {
      this.ending.taken = true;
      if (this.recorded) entry.record = encodeReplyRecord(this.kept);
    }
    return entry;
  }

  /** What `take` returned is in Redis (`err` undefined), or could not be written. */
  written(err?: Error): void {
    if (err) this.writeError ??= err;
    if (!this.ending?.taken) return;
    if (this.writeError) this.ending.reject(this.writeError);
    else this.ending.resolve();
  }

  private finish(last: UnnumberedReplyEvent): Promise<void> {
    if (this.writeError) return Promise.reject(this.writeError);
    if (this.ending) return Promise.reject(new Error('The reply has ended already.'));
    this.flushChoices();
    this.queue(last, true);
    return new Promise<void>((resolve, reject) => (this.ending = { resolve, reject, taken: false }));
  }

  private queue(event: UnnumberedReplyEvent, urgent = false): void {
    if (this.writeError) return;
    this.queued.push({ ...event, seq: this.seq++ } as ReplyEvent);
    this.outbox.notify(this, urgent);
  }

  private flushChoices(): void {
    for (const [choice, held] of [...this.pending].sort(([a], [b]) => a - b)) this.flushChoice(choice, held);
  }

  private flushChoice(choice: number, held: Pending): void {
    this.pending.delete(choice);
    this.queued.push({
      type: 'delta',
      attempt: this.attempt,
      seq: this.seq++,
      ...(choice ? { choice } : {}),
      ...held,
    } as ReplyEvent);
  }
}
