import type { FastifyReply } from 'fastify';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { toOpenAiError } from '../errors/to-openai-error.js';
import type { DeltaEvent, EndEvent, ReplyRun, StartEvent } from '../contracts/reply-run.js';
import { SseWriter } from './sse.writer.js';

/** How one route shapes a reply's events as chunks (chat.completion.chunk, text_completion, Anthropic's events). */
export interface ChunkFormatter<Chunk> {
  /** Before any output: the role chunk of each choice, or echoed prompts. `start`: the first attempt's start. */
  opening(start: StartEvent): Chunk[];
  delta(event: DeltaEvent): Chunk[];
  /** Each choice's finish reason, then usage when asked for. */
  final(event: EndEvent): Chunk[];
  /** The stream's last event for a failure once it is open, where the API makes one of the reply so far (Responses' `response.failed`). */
  failed?(err: OpenAiHttpError): Chunk;
}

/**
 * How an API frames its events on the wire: whether each is named (`event: <name>`), what a failure once
 * the stream is open sends, and whether `data: [DONE]` closes it.
 */
export interface SseFraming<Chunk> {
  /** The `event:` name of a chunk (the Responses API's and Anthropic's types); absent: `data:` lines alone. */
  eventName?: (chunk: Chunk) => string;
  /** The error event's name (if any) and body, for a failure once the stream is open. */
  error(err: OpenAiHttpError): { event?: string; body: unknown };
  /** Whether the stream ends with `data: [DONE]`. */
  done: boolean;
}

export interface StreamOptions<Chunk = unknown> {
  /** Number each chunk (`id: <n>`, its place in the reply) so a client can resume after it. */
  numbered: boolean;
  /** Resuming: send only the chunks after this one. */
  after?: number;
  /** How the route's API frames its events. */
  framing: SseFraming<Chunk>;
}

/**
 * Streams a reply as Server-Sent Events. The first event is awaited before the stream opens, so a
 * failure before generation is still a plain JSON error with its status. Once open, a failure ends
 * the stream with the framing's error event.
 */
export async function streamReply<Chunk>(
  run: ReplyRun,
  reply: FastifyReply,
  formatter: ChunkFormatter<Chunk>,
  options: StreamOptions<Chunk>,
): Promise<void> {
  const first = await run.events.next();
  const headers = reply.getHeaders();
  reply.hijack();
  const sse = new SseWriter(reply.raw);
  // Chunks are numbered by their place in the reply, the same on every replay of its events.
  let index = -1;
  const after = options.after ?? -1;
  let sent = false;
  const { framing } = options;
  const send = (chunks: Chunk[]) => {
    for (const chunk of chunks) {
      if (++index <= after) continue;
      sse.data(chunk, options.numbered ? index : undefined, framing.eventName?.(chunk));
    }
  };
  sse.open(headers);
  let opened = false;
  try {
    for (let step = first; !step.done; step = await run.events.next()) {
      const event = step.value;
      if (event.type === 'start') {
        // A resumed attempt continues the same message; one that starts over cannot be taken back once sent.
        if (!event.resumed && sent) {
          throw OpenAiHttpError.serverError(
            'The worker generating this reply stopped and it had to start over; retry the request.',
            ErrorCode.replyRestarted,
          );
        }
        if (!opened) send(formatter.opening(event));
        opened = true;
      } else if (event.type === 'delta') {
        const chunks = formatter.delta(event);
        send(chunks);
        sent ||= chunks.length > 0;
      } else if (event.type === 'end') send(formatter.final(event));
    }
    if (framing.done) sse.done();
    else sse.end();
  } catch (err) {
    const error = toOpenAiError(err);
    const last = formatter.failed?.(error);
    if (last !== undefined) sse.fail(last, framing.eventName?.(last));
    else {
      const { event, body } = framing.error(error);
      sse.fail(body, event);
    }
  }
}
