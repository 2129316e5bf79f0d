import { describe, expect, it } from '@jest/globals';
import type { ChatTurn } from './generation-job.js';
import { PROMPT_BLOCK_CHARS, canonicalPrompt, promptBlockHashes } from './prompt-blocks.js';

const system: ChatTurn = { role: 'system', content: 'Sort the tickets. '.repeat(100) };
const turn = (role: ChatTurn['role'], content: string): ChatTurn => ({ role, content });

/** How many leading hashes two chains share. */
const shared = (a: string[], b: string[]) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

describe('prompt block hashes', () => {
  it('hash whole blocks only, each one chained to every block before it', () => {
    const shape = { messages: [system] };
    const text = canonicalPrompt(shape)!;
    const hashes = promptBlockHashes(shape);
    expect(hashes).toHaveLength(Math.floor(text.length / PROMPT_BLOCK_CHARS));
    expect(new Set(hashes).size).toBe(hashes.length);
    // The same block text at another place in the chain hashes differently.
    const repeated = promptBlockHashes({ messages: [turn('user', 'x'.repeat(4 * PROMPT_BLOCK_CHARS))] });
    expect(new Set(repeated.slice(1)).size).toBe(repeated.length - 1);
  });

  it("a conversation's next turn extends the chain of what the worker holds after replying", () => {
    const history = [system, turn('user', 'My card was charged twice. '.repeat(20))];
    const reply = 'Sorry to hear that; a refund is on its way. '.repeat(10);
    const held = promptBlockHashes({ messages: history }, reply);
    const next = promptBlockHashes({
      messages: [...history, turn('assistant', reply), turn('user', 'How long will it take?')],
    });
    expect(held.length).toBeGreaterThan(promptBlockHashes({ messages: history }).length);
    expect(shared(held, next)).toBe(held.length);
  });

  it('requests sharing instructions share the blocks those cover, and part where their text does', () => {
    const a = promptBlockHashes({ messages: [system, turn('user', 'Ticket: late delivery. '.repeat(30))] });
    const b = promptBlockHashes({ messages: [system, turn('user', 'Ticket: wrong invoice. '.repeat(30))] });
    const whole = Math.floor(system.content.length / PROMPT_BLOCK_CHARS);
    expect(shared(a, b)).toBeGreaterThanOrEqual(whole - 1);
    expect(shared(a, b)).toBeLessThan(a.length);
  });

  it('tools come first, as templates write them: different tools share nothing', () => {
    const tool = (name: string) => ({ name, parameters: { type: 'object' } });
    const a = promptBlockHashes({ messages: [system], tools: [tool('lookup')] });
    const b = promptBlockHashes({ messages: [system], tools: [tool('search')] });
    expect(shared(a, b)).toBe(0);
  });

  it('a single legacy prompt has a chain; several have none', () => {
    expect(promptBlockHashes({ messages: [], prompts: ['y'.repeat(3000)] }).length).toBeGreaterThan(0);
    expect(promptBlockHashes({ messages: [], prompts: ['y'.repeat(3000), 'z'] })).toEqual([]);
  });

  it('a cache key seeds the chain: prompts under one key match, under another key or none they do not', () => {
    const messages = [system, turn('user', 'Step one.')];
    const a = promptBlockHashes({ messages, cacheKey: 'session-1' });
    const again = promptBlockHashes({ messages: [...messages, turn('user', 'Step two.')], cacheKey: 'session-1' });
    expect(shared(a, again)).toBe(a.length);
    expect(shared(a, promptBlockHashes({ messages, cacheKey: 'session-2' }))).toBe(0);
    expect(shared(a, promptBlockHashes({ messages }))).toBe(0);
  });
});
