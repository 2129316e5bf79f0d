/**
 * Where a request's prompt may already be computed, told without a tokenizer: the API never loads a
 * model, so it cannot count a prompt's tokens, let alone compare them with a worker's KV cells. Both
 * sides instead cut the prompt's canonical text into fixed blocks and chain their hashes, as SGLang's
 * router matches requests on text. A worker announces the chains of what its sequences hold; the API
 * looks for the longest chain of a new request that a live worker announces. Because each hash covers
 * every block before it, a match of i blocks means the whole first i blocks are the same text, and
 * a worker holding block i holds blocks 1…i-1 too.
 */
import { createHash } from 'node:crypto';
import type { ChatTurn, ToolSpec } from './generation-job.js';

/** Characters per block: about 64 tokens of English, a quarter of the worker's prefill chunk. */
export const PROMPT_BLOCK_CHARS = 256;

/**
 * The fewest matching blocks worth routing for: a worker reuses whole 256-token chunks, and about
 * 1 kB of text is one. A shorter match saves nothing and would only pull load towards one worker.
 */
export const MIN_ROUTED_BLOCKS = 4;

/** Blocks past this are not hashed: a match that long is already certain, and the cost stays bounded. */
const MAX_BLOCKS = 1024;

/** What of a job decides its prompt's beginning. */
export interface PromptShape {
  messages: readonly ChatTurn[];
  prompts?: readonly string[];
  tools?: readonly ToolSpec[];
  /** The client's key for prompts that share a beginning: prompts under other keys (or none) never match. */
  cacheKey?: string;
}

// Separators no chat text contains in practice, so two different turn lists never join to one text.
const FIELD = '\u0001';
const TURN = '\u0002';

// A turn with images is its parts in order, each image by its hash, so different images never match.
const IMAGE = '\u0003';
const turnBody = (t: ChatTurn): string =>
  t.parts ? t.parts.map((p) => (p.type === 'image' ? IMAGE + p.image.sha256 + IMAGE : p.text)).join('') : t.content;

const turnText = (t: ChatTurn): string =>
  [t.role, turnBody(t), t.toolCalls ? JSON.stringify(t.toolCalls) : '', t.toolCallId ?? ''].join(FIELD) + TURN;

/**
 * The text a prompt's blocks are cut from: the tools (the chat template writes them first), then every
 * turn, then `reply` as the assistant's next turn when given (what a sequence holds after replying).
 * Null for what has no single prompt: several legacy prompts.
 */
export function canonicalPrompt(shape: PromptShape, reply?: string): string | null {
  if (shape.prompts) return shape.prompts.length === 1 ? `P${FIELD}${shape.prompts[0]}${reply ?? ''}` : null;
  const tools = shape.tools?.length ? `T${FIELD}${JSON.stringify(shape.tools)}${TURN}` : '';
  const turns = shape.messages.map(turnText).join('');
  return tools + turns + (reply === undefined ? '' : turnText({ role: 'assistant', content: reply }));
}

/** The chained hashes of the prompt's whole blocks, first block first; a partial last block is left out. */
export function promptBlockHashes(shape: PromptShape, reply?: string): string[] {
  const text = canonicalPrompt(shape, reply);
  if (text === null) return [];
  const count = Math.min(Math.floor(text.length / PROMPT_BLOCK_CHARS), MAX_BLOCKS);
  const hashes: string[] = [];
  // A key seeds the chain: every block's hash then covers it too.
  let previous = shape.cacheKey
    ? createHash('sha1').update(`K${FIELD}${shape.cacheKey}`).digest('hex').slice(0, 16)
    : '';
  for (let i = 0; i < count; i++) {
    const block = text.slice(i * PROMPT_BLOCK_CHARS, (i + 1) * PROMPT_BLOCK_CHARS);
    previous = createHash('sha1').update(previous).update(block).digest('hex').slice(0, 16);
    hashes.push(previous);
  }
  return hashes;
}
