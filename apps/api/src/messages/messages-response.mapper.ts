import type {
  AnthropicUsageTier,
  ContentBlock,
  Message,
  MessageStreamEvent,
  MessagesUsage,
  StopReason,
} from '@conveyor/openai';
import type { ChoiceResult, FinishReason, QueueTier, ReplyResult, TokenUsage } from '@conveyor/queue';
import type { DeltaEvent, EndEvent, ReplyIdentity, StartEvent } from '../contracts/reply-run.js';
import { finishReasonsOf } from '../contracts/reply-run.js';

/**
 * Why a reply ended, in Anthropic's words, and the stop sequence that ended it. A reply the engine says
 * one of the request's stop sequences ended is `stop_sequence`; any other `stop` (the model's own end,
 * or a stop sequence an engine cannot name: see the engines) is `end_turn`. A reply cut short before
 * the request's `maxTokens` was cut by the end of the context (the worker clamps the budget to the
 * room the prompt leaves): `model_context_window_exceeded`, as Anthropic names it.
 */
export function toStopReason(
  reason: FinishReason,
  stopSequence: string | null | undefined,
  usage?: TokenUsage,
  maxTokens?: number,
): { stop_reason: StopReason; stop_sequence: string | null } {
  if (reason === 'stop' && typeof stopSequence === 'string')
    return { stop_reason: 'stop_sequence', stop_sequence: stopSequence };
  if (reason === 'length' && usage && maxTokens !== undefined && usage.completionTokens < maxTokens)
    return { stop_reason: 'model_context_window_exceeded', stop_sequence: null };
  const stop_reason = reason === 'length' ? 'max_tokens' : reason === 'tool_calls' ? 'tool_use' : 'end_turn';
  return { stop_reason, stop_sequence: null };
}

/** The tier Anthropic's usage names: `priority` for the priority band, `standard` for the others. */
export const usageTierOf = (tier: QueueTier | undefined): AnthropicUsageTier =>
  tier === 'priority' ? 'priority' : 'standard';

/** Anthropic counts the prompt tokens a cache reused apart from those it computed; their sum is the prompt. */
export function toMessagesUsage(usage: TokenUsage, tier?: AnthropicUsageTier): MessagesUsage {
  const cached = usage.cachedTokens ?? 0;
  return {
    input_tokens: usage.promptTokens - cached,
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    ...(tier ? { service_tier: tier } : {}),
  };
}

/** A tool call's arguments as the object Anthropic's `input` is; text that is not a JSON object is kept under `raw`. */
function toInput(args: string): unknown {
  try {
    const value: unknown = JSON.parse(args || '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { raw: args };
  } catch {
    return { raw: args };
  }
}

/** A choice's blocks in reply order: its thought (when asked for), its text, then each call it made. */
function contentOf(choice: ChoiceResult | undefined, thinking: boolean): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (!choice) return blocks;
  if (thinking && choice.reasoning) blocks.push({ type: 'thinking', thinking: choice.reasoning, signature: '' });
  if (choice.text || !choice.toolCalls?.length) blocks.push({ type: 'text', text: choice.text });
  for (const call of choice.toolCalls ?? []) {
    blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toInput(call.arguments) });
  }
  return blocks;
}

/**
 * A finished reply as Anthropic's `message`. `thinking`: the request asked for the thought segment;
 * `maxTokens`: its budget, which tells a reply the context's end cut short; `tier`: what its usage says
 * it was served at (a batch line's: `batch`).
 */
export function toMessage(
  who: ReplyIdentity,
  reply: ReplyResult,
  thinking: boolean,
  maxTokens?: number,
  tier: AnthropicUsageTier = usageTierOf(who.tier),
): Message {
  const choice = reply.choices[0];
  return {
    id: who.id,
    type: 'message',
    role: 'assistant',
    content: contentOf(choice, thinking),
    model: who.model,
    ...toStopReason(choice?.finishReason ?? 'stop', choice?.stopSequence, reply.usage, maxTokens),
    usage: toMessagesUsage(reply.usage, tier),
  };
}

type Block = 'thinking' | 'text' | 'tool_use';

/**
 * Shapes a reply's events as Anthropic's stream: `message_start` and a `ping`, then each block opened,
 * filled by deltas and closed in turn (thinking, text, then one block per tool call), then
 * `message_delta` with the stop reason and usage, and `message_stop`. Replaying the same events gives
 * the same stream, so a resumed stream's events line up with the first one's.
 */
export class MessageEventFormatter {
  private index = -1;
  private open: Block | null = null;
  private call = -1;

  constructor(
    private readonly who: ReplyIdentity,
    private readonly thinking: boolean,
    private readonly maxTokens?: number,
  ) {}

  opening(start: StartEvent): MessageStreamEvent[] {
    const message: Message = {
      id: this.who.id,
      type: 'message',
      role: 'assistant',
      content: [],
      model: this.who.model,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: start.promptTokens, output_tokens: 0, service_tier: usageTierOf(this.who.tier) },
    };
    return [{ type: 'message_start', message }, { type: 'ping' }];
  }

  delta(event: DeltaEvent): MessageStreamEvent[] {
    // One message: the pipeline's other choices (n) are not asked for by this API.
    if (event.choice) return [];
    const events: MessageStreamEvent[] = [];
    if (event.reasoning && this.thinking) {
      this.ensure('thinking', events, { type: 'thinking', thinking: '', signature: '' });
      events.push(this.blockDelta({ type: 'thinking_delta', thinking: event.reasoning }));
    }
    if (event.text) {
      this.ensure('text', events, { type: 'text', text: '' });
      events.push(this.blockDelta({ type: 'text_delta', text: event.text }));
    }
    const call = event.toolCall;
    if (call) {
      if (this.open !== 'tool_use' || call.index !== this.call) {
        this.close(events);
        this.call = call.index;
        this.start('tool_use', events, { type: 'tool_use', id: call.id ?? '', name: call.name ?? '', input: {} });
      }
      if (call.arguments) events.push(this.blockDelta({ type: 'input_json_delta', partial_json: call.arguments }));
    }
    return events;
  }

  final(event: EndEvent): MessageStreamEvent[] {
    const events: MessageStreamEvent[] = [];
    // A reply with nothing in it is still one empty text block, as Anthropic's are.
    if (this.index < 0) this.start('text', events, { type: 'text', text: '' });
    this.close(events);
    const usage = toMessagesUsage(event.usage);
    events.push(
      {
        type: 'message_delta',
        delta: toStopReason(finishReasonsOf(event)[0] ?? 'stop', event.stopSequences?.[0], event.usage, this.maxTokens),
        usage: {
          output_tokens: usage.output_tokens,
          input_tokens: usage.input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
        },
      },
      { type: 'message_stop' },
    );
    return events;
  }

  private ensure(kind: Block, events: MessageStreamEvent[], block: ContentBlock): void {
    if (this.open === kind) return;
    this.close(events);
    this.start(kind, events, block);
  }

  private start(kind: Block, events: MessageStreamEvent[], block: ContentBlock): void {
    this.open = kind;
    events.push({ type: 'content_block_start', index: ++this.index, content_block: block });
  }

  private close(events: MessageStreamEvent[]): void {
    if (this.open === null) return;
    events.push({ type: 'content_block_stop', index: this.index });
    this.open = null;
  }

  private blockDelta(delta: Extract<MessageStreamEvent, { type: 'content_block_delta' }>['delta']): MessageStreamEvent {
    return { type: 'content_block_delta', index: this.index, delta };
  }
}
