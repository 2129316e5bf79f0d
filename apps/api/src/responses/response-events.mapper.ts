import type { ResponseError, ResponseObject, ResponseOutputItem, ResponseStreamEvent } from '@conveyor/openai';
import type { OpenAiHttpError } from '../errors/openai-http.error.js';
import type { ReplyResult, ToolCall } from '@conveyor/queue';
import type { DeltaEvent, EndEvent, ReplyIdentity } from '../contracts/reply-run.js';
import type { ChunkFormatter } from '../generation/reply-stream.js';
import {
  DEFAULT_ECHO,
  OutputIds,
  OutputShape,
  finishedResponse,
  messageItem,
  pendingResponse,
  reasoningItem,
  type OutputOptions,
  type ResponseEcho,
} from './response.mapper.js';

/** The codes a `response.failed` event's error carries, as OpenAI's own; anything else is a server_error. */
const FAILURE_CODES: ReadonlySet<string> = new Set([
  'server_error',
  'rate_limit_exceeded',
  'context_length_exceeded',
  'invalid_prompt',
  'insufficient_quota',
]);

/** A failure as a response's `error`: OpenAI's code for it, and what went wrong. */
export function responseError(err: OpenAiHttpError): ResponseError {
  const code =
    err.code && FAILURE_CODES.has(err.code) ? err.code : err.status === 429 ? 'rate_limit_exceeded' : 'server_error';
  return { code, message: err.message };
}

/** An event before it is numbered: the formatter numbers them in the order it makes them. */
type Unnumbered = ResponseStreamEvent extends infer E
  ? E extends ResponseStreamEvent
    ? Omit<E, 'sequence_number'>
    : never
  : never;

type Open =
  | { kind: 'reasoning'; index: number; id: string; text: string }
  | { kind: 'message'; index: number; id: string; text: string }
  | { kind: 'call'; index: number; id: string; call: ToolCall; callIndex: number; custom: boolean };

/**
 * The one builder of a response's `output[]`, from its reply's events as they come, and those events as
 * the Responses API streams them: response.created and .in_progress, then per
 * output item its added / delta / done events, then response.completed (or .incomplete) with the
 * whole response. Each event's `sequence_number` is its place in the stream, the same on every replay
 * of the reply, so a client resumes after the one it last had (`starting_after`, Last-Event-ID).
 */
export class ResponseEventFormatter implements ChunkFormatter<ResponseStreamEvent> {
  private seq = 0;
  private readonly ids: OutputIds;
  private readonly shape: OutputShape;
  private readonly output: ResponseOutputItem[] = [];
  private open: Open | null = null;
  private messages = 0;
  /** The finished response, once the final events are made. */
  result: ResponseObject | null = null;

  constructor(
    private readonly who: ReplyIdentity,
    private readonly echo: ResponseEcho,
    options: OutputOptions = {},
  ) {
    this.ids = new OutputIds(who.id);
    this.shape = new OutputShape(this.ids, echo, options);
  }

  private number(events: Unnumbered[]): ResponseStreamEvent[] {
    return events.map((e) => ({ ...e, sequence_number: this.seq++ }) as ResponseStreamEvent);
  }

  opening(): ResponseStreamEvent[] {
    const response = pendingResponse(this.who, this.echo, 'in_progress');
    return this.number([
      { type: 'response.created', response },
      { type: 'response.in_progress', response },
    ]);
  }

  delta(event: DeltaEvent): ResponseStreamEvent[] {
    // One choice: the Responses API has no `n`.
    if ((event.choice ?? 0) !== 0) return [];
    const out: Unnumbered[] = [];
    if (event.reasoning) {
      const open = this.open?.kind === 'reasoning' ? this.open : this.openReasoning(out);
      open.text += event.reasoning;
      out.push({
        type: 'response.reasoning_text.delta',
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        delta: event.reasoning,
      });
    }
    if (event.text) {
      const open = this.open?.kind === 'message' ? this.open : this.openMessage(out);
      open.text += event.text;
      out.push({
        type: 'response.output_text.delta',
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        delta: event.text,
        logprobs: [],
      });
    }
    const piece = event.toolCall;
    if (piece) {
      let open = this.open;
      if (open?.kind !== 'call' || open.callIndex !== piece.index) {
        this.close(out);
        const call = { id: piece.id ?? '', name: piece.name ?? '', arguments: '' };
        open = {
          kind: 'call',
          index: this.output.length,
          id: this.shape.callId(piece.index, call.name),
          call,
          callIndex: piece.index,
          custom: this.shape.tools.get(call.name)?.kind === 'custom',
        };
        this.open = open;
        const item = this.shape.call(open.id, call, 'in_progress');
        this.output.push(item);
        out.push({ type: 'response.output_item.added', output_index: open.index, item });
      }
      open.call.arguments += piece.arguments;
      // A custom tool's input is one JSON string argument: it is sent once whole, at the call's end.
      if (piece.arguments && !open.custom)
        out.push({
          type: 'response.function_call_arguments.delta',
          item_id: open.id,
          output_index: open.index,
          delta: piece.arguments,
        });
    }
    return this.number(out);
  }

  final(event: EndEvent): ResponseStreamEvent[] {
    const out: Unnumbered[] = [];
    this.close(out, event.finishReason === 'length' ? 'incomplete' : 'completed');
    // A reply with neither text nor calls is one empty message, as the unstreamed response has.
    if (!this.output.some((i) => i.type !== 'reasoning')) {
      this.openMessage(out);
      this.close(out);
    }
    const response = finishedResponse(this.who, this.echo, [...this.output], event.finishReason, event.usage);
    this.result = response;
    out.push({ type: response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', response });
    return this.number(out);
  }

  /**
   * The `response.failed` event for a failure once the stream is open: the response as far as it
   * got, `failed`, with OpenAI's error code. It is the stream's last event.
   */
  failed(err: OpenAiHttpError): ResponseStreamEvent {
    const response: ResponseObject = {
      ...pendingResponse(this.who, this.echo, 'failed'),
      output: [...this.output],
      error: responseError(err),
    };
    return { type: 'response.failed', response, sequence_number: this.seq++ };
  }

  private openReasoning(out: Unnumbered[]): Extract<Open, { kind: 'reasoning' }> {
    this.close(out);
    const open = { kind: 'reasoning' as const, index: this.output.length, id: this.ids.reasoning(), text: '' };
    this.open = open;
    const item = { ...reasoningItem(open.id, ''), content: [], status: 'in_progress' as const };
    this.output.push(item);
    out.push({ type: 'response.output_item.added', output_index: open.index, item });
    out.push({
      type: 'response.content_part.added',
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      part: { type: 'reasoning_text', text: '' },
    });
    return open;
  }

  private openMessage(out: Unnumbered[]): Extract<Open, { kind: 'message' }> {
    this.close(out);
    const open = {
      kind: 'message' as const,
      index: this.output.length,
      id: this.ids.message(this.messages++),
      text: '',
    };
    this.open = open;
    const item = { ...messageItem(open.id, '', 'in_progress'), content: [] };
    this.output.push(item);
    out.push({ type: 'response.output_item.added', output_index: open.index, item });
    out.push({
      type: 'response.content_part.added',
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    });
    return open;
  }

  /** Ends the item under way: its done events, and its finished form in the output (a cut message `incomplete`). */
  private close(out: Unnumbered[], status: 'completed' | 'incomplete' = 'completed'): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    const at = { item_id: open.id, output_index: open.index };
    let item: ResponseOutputItem;
    if (open.kind === 'reasoning') {
      item = { ...this.shape.reasoning(open.id, open.text), status: 'completed' };
      out.push({ type: 'response.reasoning_text.done', ...at, content_index: 0, text: open.text });
      out.push({
        type: 'response.content_part.done',
        ...at,
        content_index: 0,
        part: { type: 'reasoning_text', text: open.text },
      });
    } else if (open.kind === 'message') {
      item = messageItem(open.id, open.text, status);
      out.push({ type: 'response.output_text.done', ...at, content_index: 0, text: open.text, logprobs: [] });
      out.push({ type: 'response.content_part.done', ...at, content_index: 0, part: item.content[0]! });
    } else {
      item = this.shape.call(open.id, open.call, 'completed');
      if (item.type === 'custom_tool_call') {
        if (item.input) out.push({ type: 'response.custom_tool_call_input.delta', ...at, delta: item.input });
        out.push({ type: 'response.custom_tool_call_input.done', ...at, input: item.input });
      } else if (item.type === 'function_call') {
        out.push({
          type: 'response.function_call_arguments.done',
          ...at,
          name: item.name,
          arguments: open.call.arguments,
        });
      }
    }
    this.output[open.index] = item;
    out.push({ type: 'response.output_item.done', output_index: open.index, item });
  }
}

/**
 * A finished reply (a batch line's, gathered by its worker) as its response: replayed through the
 * stream's builder, reasoning, then text, then each call, so that its `output[]` is made as a body's or
 * a stream's is.
 */
export function toResponseObject(
  who: ReplyIdentity,
  reply: ReplyResult,
  echo: ResponseEcho = DEFAULT_ECHO,
  options: OutputOptions = {},
): ResponseObject {
  const choice = reply.choices[0] ?? { index: 0, text: '', finishReason: 'stop' as const };
  const builder = new ResponseEventFormatter(who, echo, options);
  const piece = { type: 'delta', attempt: 1, seq: 0, text: '' } as const;
  builder.delta({ ...piece, text: choice.text, ...(choice.reasoning ? { reasoning: choice.reasoning } : {}) });
  (choice.toolCalls ?? []).forEach(({ id, name, arguments: args }, index) =>
    builder.delta({ ...piece, toolCall: { index, id, name, arguments: args } }),
  );
  builder.final({ type: 'end', attempt: 1, seq: 0, finishReason: choice.finishReason, usage: reply.usage });
  return builder.result!;
}
