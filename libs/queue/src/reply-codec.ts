import type { FinishReason, TokenUsage } from './generation-job.js';
import type { ReplyEvent } from './stream-events.js';

/**
 * The compact forms of reply events in Redis. Replies cost the broker per token, so what a worker
 * writes per token is kept small: one inbox entry carries many replies' events (one field per reply),
 * and a reply's events in it are one group `[attempt, firstSeq, ...events]` (its events share their
 * attempt, and their seqs follow each other), each event an array led by a small code:
 *
 *   [0, promptTokens, resumed]                   start
 *   [1, text, tokens?, choice?]                  delta of plain text (tokens: null when unknown)
 *   [2, {…delta fields}]                         any other delta (reasoning, a tool call, logprobs)
 *   [3, index, vector]                           embedding
 *   [4, finishReason, usage, finishReasons?, stopSequences?]   end (finishReasons null when only stopSequences is set)
 *   [5, status, code, message, param?]           error
 *   [6, tokens, maxModelLen, text?]              tokens (a tokenize job's answer)
 *
 * A finished reply is folded into one record (`encodeRecord`): its groups as above, but every plain
 * delta's text moved into one string and the delta left as its length, `[1, length, choice?]`.
 */
type Encoded = readonly unknown[];
type Group = [attempt: number, firstSeq: number, ...events: Encoded[]];

type Delta = Extract<ReplyEvent, { type: 'delta' }>;

const isPlain = (e: Delta): boolean => !e.reasoning && !e.toolCall && !e.logprobs?.length;

function encodeEvent(event: ReplyEvent): Encoded {
  switch (event.type) {
    case 'start':
      return [0, event.promptTokens, event.resumed ? 1 : 0];
    case 'delta': {
      if (isPlain(event)) {
        const choice = event.choice ?? 0;
        return choice ? [1, event.text, event.tokens ?? null, choice] : [1, event.text, event.tokens ?? null];
      }
      const { type: _type, attempt: _attempt, seq: _seq, ...rest } = event;
      return [2, rest];
    }
    case 'embedding':
      return [3, event.index, event.vector];
    case 'end':
      if (event.stopSequences)
        return [4, event.finishReason, event.usage, event.finishReasons ?? null, event.stopSequences];
      return event.finishReasons
        ? [4, event.finishReason, event.usage, event.finishReasons]
        : [4, event.finishReason, event.usage];
    case 'tokens':
      return event.text !== undefined
        ? [6, event.tokens, event.maxModelLen, event.text]
        : [6, event.tokens, event.maxModelLen];
    case 'error':
      return event.param !== undefined
        ? [5, event.status, event.code, event.message, event.param]
        : [5, event.status, event.code, event.message];
  }
}

function decodeEvent(code: Encoded, attempt: number, seq: number, text?: () => string): ReplyEvent {
  const base = { attempt, seq };
  switch (code[0]) {
    case 0:
      return { type: 'start', ...base, promptTokens: code[1] as number, resumed: code[2] === 1 };
    case 1: {
      const tokens = code[2] as number | null;
      const choice = code[3] as number | undefined;
      return {
        type: 'delta',
        ...base,
        text: text ? text() : (code[1] as string),
        ...(tokens !== null ? { tokens } : {}),
        ...(choice ? { choice } : {}),
      };
    }
    case 2:
      return { type: 'delta', ...base, ...(code[1] as Omit<Delta, 'type' | 'attempt' | 'seq'>) };
    case 3:
      return { type: 'embedding', ...base, index: code[1] as number, vector: code[2] as string };
    case 4:
      return {
        type: 'end',
        ...base,
        finishReason: code[1] as FinishReason,
        usage: code[2] as TokenUsage,
        ...(code[3] ? { finishReasons: code[3] as FinishReason[] } : {}),
        ...(code[4] ? { stopSequences: code[4] as Array<string | null> } : {}),
      };
    case 5:
      return {
        type: 'error',
        ...base,
        status: code[1] as number,
        code: code[2] as string,
        message: code[3] as string,
        ...(code[4] !== undefined ? { param: code[4] as string } : {}),
      };
    case 6:
      return {
        type: 'tokens',
        ...base,
        tokens: code[1] as number[],
        maxModelLen: code[2] as number,
        ...(code[3] !== undefined ? { text: code[3] as string } : {}),
      };
    default:
      throw new Error(`Unknown reply event code ${JSON.stringify(code[0])}`);
  }
}

/** One attempt's consecutive events, as one inbox field value. All must share an attempt, their seqs in order. */
export function encodeReplyGroup(events: readonly ReplyEvent[]): string {
  const first = events[0];
  if (!first) throw new Error('An empty group of reply events.');
  return JSON.stringify([first.attempt, first.seq, ...events.map(encodeEvent)]);
}

/** The events of one inbox field value. */
export function decodeReplyGroup(value: string): ReplyEvent[] {
  const [attempt, firstSeq, ...events] = JSON.parse(value) as Group;
  return events.map((code, i) => decodeEvent(code, attempt, firstSeq + i));
}

/** Splits `events` into runs of one attempt with consecutive seqs: the groups they are written as. */
function groupsOf(events: readonly ReplyEvent[]): ReplyEvent[][] {
  const groups: ReplyEvent[][] = [];
  for (const event of events) {
    const last = groups[groups.length - 1];
    const previous = last?.[last.length - 1];
    if (last && previous && previous.attempt === event.attempt && previous.seq + 1 === event.seq) last.push(event);
    else groups.push([event]);
  }
  return groups;
}

/**
 * A finished reply as one record: its events, as a reader would relay them, in groups, with the plain
 * deltas' text in one string (a delta keeps its length and token count). The record costs a few bytes
 * a token beyond the text, where one stream entry per tick cost about 90.
 */
export function encodeReplyRecord(events: readonly ReplyEvent[]): string {
  let text = '';
  const groups = groupsOf(events).map((group) => {
    const encoded: unknown[] = [group[0]!.attempt, group[0]!.seq];
    for (const event of group) {
      if (event.type === 'delta' && isPlain(event)) {
        text += event.text;
        const choice = event.choice ?? 0;
        const tokens = event.tokens ?? null;
        encoded.push(choice ? [1, event.text.length, tokens, choice] : [1, event.text.length, tokens]);
      } else encoded.push(encodeEvent(event));
    }
    return encoded;
  });
  return JSON.stringify([text, ...groups]);
}

/** The events of a record written by `encodeReplyRecord`. */
export function decodeReplyRecord(value: string): ReplyEvent[] {
  const [text, ...groups] = JSON.parse(value) as [string, ...Group[]];
  let at = 0;
  const events: ReplyEvent[] = [];
  for (const [attempt, firstSeq, ...codes] of groups) {
    codes.forEach((code, i) => {
      const slice =
        code[0] === 1
          ? () => {
              const length = code[1] as number;
              at += length;
              return text.slice(at - length, at);
            }
          : undefined;
      events.push(decodeEvent(code, attempt, firstSeq + i, slice));
    });
  }
  return events;
}
