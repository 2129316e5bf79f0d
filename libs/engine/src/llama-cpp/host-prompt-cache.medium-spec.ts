import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Token } from 'node-llama-cpp';
import { ensurePresetModel } from '@conveyor/gguf';
import type { ChatTurn } from '@conveyor/queue';
import { STATE_FOLDER_PREFIX, stateFolderRoot } from './host-prompt-cache.js';
import { commonPrefix } from './prompt-reuse.js';
import { LlamaCppEngine, type LlamaCppEngineOptions } from './llama-cpp.engine.js';

// Instructions long enough to be worth keeping (several hundred tokens), each its own.
const instructions = (topic: string) => `You answer questions about ${topic}, briefly and carefully. `.repeat(30);
const ask = (topic: string, question: string): ChatTurn[] => [
  { role: 'system', content: instructions(topic) },
  { role: 'user', content: question },
];
const A = (question: string) => ask('the sea', question);
const B = (question: string) => ask('mountains', question);
const C = (question: string) => ask('deserts', question);

const MIB = 2 ** 20;

async function load(options: Partial<LlamaCppEngineOptions>): Promise<LlamaCppEngine> {
  const modelPath = await ensurePresetModel('tiny', resolve(import.meta.dirname, '../../../../models'));
  // One sequence: every request with other instructions pushes the last one's out of it.
  return LlamaCppEngine.load({ modelPath, contextSize: 2048, parallel: 1, threads: 1, gpu: false, ...options });
}

/** A greedy reply of 16 tokens: its text, and how many prompt tokens were reused rather than computed. */
async function reply(engine: LlamaCppEngine, messages: ChatTurn[]): Promise<{ text: string; cached: number }> {
  let text = '';
  const result = await engine.generate(
    { messages, sampling: { temperature: 0, ignoreEos: true }, maxTokens: 16, stop: [] },
    { onStart: () => undefined, onOutput: (p) => (text += p.text ?? '') },
  );
  return { text, cached: result.usage.cachedTokens ?? -1 };
}

/** Tokens two conversations' prompts begin with alike. */
async function shared(engine: LlamaCppEngine, a: ChatTurn[], b: ChatTurn[]): Promise<number> {
  const [x, y] = await Promise.all([engine.tokenizer.chat({ messages: a }), engine.tokenizer.chat({ messages: b })]);
  return commonPrefix(x as Token[], y as Token[]);
}

describe('the prompt cache in host memory (the generated tiny model, one sequence)', () => {
  const engines: LlamaCppEngine[] = [];
  const open = async (options: Partial<LlamaCppEngineOptions>) => {
    const engine = await load(options);
    engines.push(engine);
    return engine;
  };

  afterAll(async () => {
    await Promise.all(engines.map((e) => e.dispose()));
  });

  let uncached: LlamaCppEngine;
  beforeAll(async () => {
    uncached = await open({ promptCache: 'off' });
  });

  it('a prefix pushed out of the sequence is read back for a later prompt, which says what an uncached engine says', async () => {
    const engine = await open({ promptCache: 'full', promptCacheRam: 256 * MIB });
    await reply(engine, A('What lives in it?'));
    await reply(engine, B('How high are they?'));
    expect(engine.hostCache.entries).toBe(1);
    const prefix = await shared(engine, A('What lives in it?'), A('Why is it salty?'));
    expect(prefix).toBeGreaterThan(256);
    const again = await reply(engine, A('Why is it salty?'));
    expect(again.cached).toBeGreaterThanOrEqual(prefix);
    expect(again.text).toBe((await reply(uncached, A('Why is it salty?'))).text);
    // B went to host memory in its turn; A's entry is still there, the most recently used.
    expect(engine.hostCache.entries).toBe(2);
  });

  it('exact: restored in whole chunks computed as a prompt', async () => {
    const engine = await open({ promptCache: 'exact', promptCacheRam: 256 * MIB });
    await reply(engine, A('What lives in it?'));
    await reply(engine, B('How high are they?'));
    const prefix = await shared(engine, A('What lives in it?'), A('Why is it salty?'));
    const again = await reply(engine, A('Why is it salty?'));
    expect(again.cached).toBe(prefix - (prefix % 256));
    expect(again.text).toBe((await reply(uncached, A('Why is it salty?'))).text);
  });

  it('past the budget the least recently used goes: a budget under two entries keeps only the latest', async () => {
    // A's and B's entries as a roomy engine measures them: their sizes differ with their replies, so the
    // budget is set from both, under the two together and over the larger.
    const probe = await open({ promptCache: 'full', promptCacheRam: 256 * MIB });
    await reply(probe, A('What lives in it?'));
    await reply(probe, B('How high are they?'));
    const aBytes = probe.hostCache.bytes;
    await reply(probe, C('Is it hot?'));
    const bBytes = probe.hostCache.bytes - aBytes;
    expect(Math.min(aBytes, bBytes)).toBeGreaterThan(0);
    const budget = Math.floor(aBytes + bBytes - Math.min(aBytes, bBytes) / 2);

    const engine = await open({ promptCache: 'full', promptCacheRam: budget });
    await reply(engine, A('What lives in it?'));
    await reply(engine, B('How high are they?'));
    await reply(engine, C('Is it hot?'));
    // A was saved, then evicted when B was saved; C is in the sequence.
    expect(engine.hostCache.entries).toBe(1);
    const a = await reply(engine, A('Why is it salty?'));
    expect(a.cached).toBeLessThan(await shared(engine, A('What lives in it?'), A('Why is it salty?')));
    // A's request saved C (evicting B): C is read back.
    const c = await reply(engine, C('Is it cold at night?'));
    expect(c.cached).toBeGreaterThanOrEqual(await shared(engine, C('Is it hot?'), C('Is it cold at night?')));
    expect(engine.hostCache.bytes).toBeLessThanOrEqual(budget);
  });

  it('a budget of 0 keeps nothing: a prefix pushed out is computed again', async () => {
    const engine = await open({ promptCache: 'full', promptCacheRam: 0 });
    await reply(engine, A('What lives in it?'));
    await reply(engine, B('How high are they?'));
    const again = await reply(engine, A('Why is it salty?'));
    expect(again.cached).toBeLessThan(256);
    expect(engine.hostCache).toEqual({ budget: 0, bytes: 0, entries: 0 });
  });

  it('keeps its states in a folder of its own on tmpfs, gone at dispose, and removes those of processes that are gone', async () => {
    const root = stateFolderRoot();
    const ours = () => readdirSync(root).filter((name) => name.startsWith(`${STATE_FOLDER_PREFIX}${process.pid}-`));
    // A worker killed outright leaves its folder: no process has this pid (the kernel's highest is 4194304).
    const orphan = join(root, `${STATE_FOLDER_PREFIX}4194303-left`);
    mkdirSync(orphan, { recursive: true });
    writeFileSync(join(orphan, '1.state'), 'a state');
    const before = ours();
    const engine = await load({ promptCache: 'full', promptCacheRam: 64 * MIB });
    expect(existsSync(orphan)).toBe(false);
    const own = ours().filter((name) => !before.includes(name));
    expect(own).toHaveLength(1);
    await reply(engine, A('What lives in it?'));
    await reply(engine, B('How high are they?'));
    expect(readdirSync(join(root, own[0]!))).toHaveLength(1);
    await engine.dispose();
    expect(existsSync(join(root, own[0]!))).toBe(false);
  });
});
