import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { deflateSync } from 'node:zlib';
import { llamaServerCache } from '@conveyor/config';
import { ensurePresetModel, presetProjectorPath } from '@conveyor/gguf';
import type { ImageMime, ImageRef } from '@conveyor/queue';
import { llamaServerCacheDir } from '../../../../scripts/llama-server-build.mjs';
import { EngineInputError, type GenerateRequest, type OutputPiece } from '../core/generation-engine.js';
import { ImageSource } from '../core/image-source.port.js';
import { cachedLlamaServerPath, findLlamaServer } from './llama-server-binary.js';
import { LlamaServerEngine } from './llama-server.engine.js';
import { UpstreamError } from '../openai-upstream/upstream-error.js';
import { alive } from '../../../../test/support/alive.js';

/**
 * The cached llama-server build, or LLAMA_SERVER_BIN's. Outside CI a machine without one skips these
 * tests (and says so); in CI, which builds it first, its absence is a failure.
 */
async function llamaServer(): Promise<string | null> {
  try {
    return await findLlamaServer(process.env.LLAMA_SERVER_BIN ?? null, llamaServerCache());
  } catch (err) {
    if (process.env.CI) throw err;
    console.warn(`Skipping the llama-server engine tests: ${(err as Error).message}`);
    return null;
  }
}
const binary = await llamaServer();
const describeWithServer = binary ? describe : describe.skip;

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Buffer): number => {
  let c = 0xffffffff;
  for (const b of bytes) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};

/** A small RGB PNG of a gradient, encoded by hand (filter 0 on every row). */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) rows.set([x * 30, y * 30, 128], y * (1 + width * 3) + 1 + x * 3);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Images kept in memory by hash, as the worker's Redis adapter would read them. */
class MemoryImages extends ImageSource {
  private readonly stored = new Map<string, Buffer>();

  add(bytes: Buffer, mime: ImageMime, width: number, height: number): ImageRef {
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    this.stored.set(sha256, bytes);
    return { sha256, mime, bytes: bytes.length, width, height };
  }

  async read(ref: ImageRef): Promise<Buffer> {
    const bytes = this.stored.get(ref.sha256);
    if (!bytes) throw new Error(`no image ${ref.sha256}`);
    return bytes;
  }
}

const logger = { log: () => undefined, warn: () => undefined };
// A real llama-server child (the cached build) serving the generated vision preset: tiny plus a projector.
describeWithServer('LlamaServerEngine with the generated vision model', () => {
  let engine: LlamaServerEngine;
  const images = new MemoryImages();
  let options: Parameters<typeof LlamaServerEngine.start>[0];

  beforeAll(async () => {
    const dir = resolve(import.meta.dirname, '../../../../models');
    const modelPath = await ensurePresetModel('vision', dir);
    options = {
      binary: binary!,
      modelPath,
      mmprojPath: presetProjectorPath('vision', dir),
      imageMaxTokens: null,
      contextSize: 512,
      parallel: 2,
      threads: 1,
      flashAttention: 'auto',
      gpu: false,
      reasoningParser: null,
      images,
      logger,
      restartDelayMs: { min: 100, max: 1000 },
    };
    engine = await LlamaServerEngine.start(options);
  });

  afterAll(async () => {
    await engine?.dispose();
  });

  const ask = (overrides: Partial<GenerateRequest> = {}): GenerateRequest => ({
    messages: [{ role: 'user', content: 'hello' }],
    sampling: { temperature: 0, ignoreEos: true },
    maxTokens: 8,
    stop: [],
    ...overrides,
  });
  const run = async (request: GenerateRequest, onOutput: (p: OutputPiece) => void = () => undefined) => {
    const pieces: OutputPiece[] = [];
    let promptTokens = -1;
    const result = await engine.generate(request, {
      onStart: (n) => (promptTokens = n),
      onOutput: (p) => {
        expect(promptTokens).toBeGreaterThan(0);
        pieces.push(p);
        onOutput(p);
      },
    });
    const text = (choice = 0) =>
      pieces
        .filter((p) => p.choice === choice)
        .map((p) => p.text ?? '')
        .join('');
    return { result, pieces, text, promptTokens };
  };

  it('finds the build where the build script caches it', async () => {
    if (process.env.LLAMA_SERVER_BIN) return;
    expect(await cachedLlamaServerPath(llamaServerCache())).toBe(
      resolve(llamaServerCacheDir(), 'build', 'bin', 'llama-server'),
    );
  });

  it('streams a chat, counting every token as it comes, and stops exactly at max_tokens', async () => {
    const { result, pieces, promptTokens } = await run(ask({ maxTokens: 9 }));
    expect(result).toMatchObject({ finishReason: 'length', aborted: false, usage: { completionTokens: 9 } });
    expect(result.usage.promptTokens).toBe(promptTokens);
    expect(pieces.at(-1)?.tokens).toBe(9);
    const counts = pieces.map((p) => p.tokens ?? 0);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
  });

  it('repeats a reply for the same seed, gives n choices their own, and ends at a stop string', async () => {
    const sampled = ask({ sampling: { temperature: 1, seed: 42, ignoreEos: true }, maxTokens: 12 });
    const [a, b] = [await run(sampled), await run(sampled)];
    expect(a.text()).toBe(b.text());
    expect(a.text().length).toBeGreaterThan(0);

    const two = await run({ ...sampled, n: 2 });
    expect(two.result.finishReasons).toEqual(['length', 'length']);
    expect(two.text(1)).not.toBe(two.text(0));
    expect(two.result.usage.completionTokens).toBe(24);
    // More choices than the server has slots: refused before anything is sent.
    await expect(run({ ...sampled, n: 3 })).rejects.toBeInstanceOf(EngineInputError);

    const greedy = await run(ask({ maxTokens: 30 }));
    const full = greedy.text();
    const stop = full.slice(10, 13);
    const stopped = await run(ask({ maxTokens: 30, stop: ['never-generated-zzzz', stop] }));
    expect(stopped.result.finishReason).toBe('stop');
    // llama-server names the stop string it stopped at.
    expect(stopped.result.stopSequences).toEqual([stop]);
    expect(stopped.text()).toBe(full.slice(0, full.indexOf(stop)));
    expect(greedy.result.stopSequences).toBeUndefined();
  });

  it('aborts the generation when the signal fires, and serves the next request', async () => {
    const controller = new AbortController();
    const { result } = await run({ ...ask({ maxTokens: 400 }), signal: controller.signal }, (p) => {
      if ((p.tokens ?? 0) >= 3) controller.abort();
    });
    expect(result.aborted).toBe(true);
    // Fewer tokens than asked for is the abort taking effect, however slow the machine.
    expect(result.usage.completionTokens).toBeLessThan(400);
    expect((await run(ask({ maxTokens: 3 }))).result.usage.completionTokens).toBe(3);
  });

  it('continues a reply from the text sent, counting its tokens as they were generated', async () => {
    const first = await run(ask({ maxTokens: 40 }));
    const cut = first.pieces.findIndex((p) => (p.tokens ?? 0) >= 13);
    const sent = {
      text: first.pieces
        .slice(0, cut + 1)
        .map((p) => p.text ?? '')
        .join(''),
      tokens: first.pieces[cut]!.tokens!,
    };
    const resumed = await run({ ...ask({ maxTokens: 40 }), continueFrom: sent });
    expect(resumed.result.usage.completionTokens).toBe(40);
    expect(resumed.pieces[0]!.tokens).toBeGreaterThan(sent.tokens);
    expect(resumed.pieces.at(-1)?.tokens).toBe(40);
  });

  it("maps the server's 400 to an input error: a prompt longer than the context", async () => {
    const failure = run(ask({ messages: [{ role: 'user', content: 'word '.repeat(2000) }] }));
    await expect(failure).rejects.toBeInstanceOf(EngineInputError);
    await expect(failure).rejects.toMatchObject({ code: 'context_length_exceeded' });
  });

  it('answers a chat with an image, whose tokens count in the prompt', async () => {
    const picture = images.add(png(8, 8), 'image/png', 8, 8);
    const plain = await run(ask({ messages: [{ role: 'user', content: 'what is this?' }] }));
    const seen = await run(
      ask({
        messages: [
          {
            role: 'user',
            content: 'what is this?',
            parts: [
              { type: 'text', text: 'what is this?' },
              { type: 'image', image: picture },
            ],
          },
        ],
      }),
    );
    expect(seen.result).toMatchObject({ finishReason: 'length', usage: { completionTokens: 8 } });
    // The projector turns a 32x32 image into 4x4 patches: 16 tokens (and llama.cpp may mark the image's bounds).
    expect(seen.result.usage.promptTokens - plain.result.usage.promptTokens).toBeGreaterThanOrEqual(16);
  });

  it('refuses a corrupt image as an input error, and keeps serving', async () => {
    const corrupt = images.add(Buffer.from('this is not a PNG at all'), 'image/png', 8, 8);
    const failure = run(ask({ messages: [{ role: 'user', content: '', parts: [{ type: 'image', image: corrupt }] }] }));
    await expect(failure).rejects.toBeInstanceOf(EngineInputError);
    expect((await run(ask({ maxTokens: 2 }))).result.usage.completionTokens).toBe(2);
  });

  it('fails the generation in flight retryably when the server is killed, and restarts it for the next', async () => {
    const pid = engine.pid!;
    const failure = run(ask({ maxTokens: 400 }), (p) => {
      if (p.tokens === 2) process.kill(pid, 'SIGKILL');
    });
    await expect(failure).rejects.toBeInstanceOf(UpstreamError);
    await expect(failure).rejects.toThrow('llama-server exited during this generation (killed by SIGKILL)');
    // The next request waits for the restart.
    expect((await run(ask({ maxTokens: 2 }))).result.usage.completionTokens).toBe(2);
    expect(engine.pid).not.toBe(pid);
    expect(alive(pid)).toBe(false);
  });

  it("reports each token's log-probability with the alternatives asked for", async () => {
    const { pieces } = await run(ask({ maxTokens: 4, logprobs: 2 }));
    const logprobs = pieces.flatMap((p) => p.logprobs ?? []);
    expect(logprobs).toHaveLength(4);
    for (const lp of logprobs) {
      expect(lp.logprob).toBeLessThanOrEqual(0);
      expect(lp.top).toHaveLength(2);
    }
  });

  it('splits the thought segment out as reasoning for a thinking template, and then continues no reply', async () => {
    const dir = resolve(import.meta.dirname, '../../../../models');
    const thinking = await LlamaServerEngine.start({
      ...options,
      modelPath: await ensurePresetModel('think', dir),
      mmprojPath: null,
      parallel: 1,
      reasoningParser: 'think',
    });
    try {
      // The template opens each reply's thought in the prompt: text alone cannot continue it.
      expect(thinking.continuesReplies).toBe(false);
      const pieces: OutputPiece[] = [];
      await thinking.generate(ask({ maxTokens: 6 }), { onStart: () => undefined, onOutput: (p) => pieces.push(p) });
      expect(pieces.some((p) => p.reasoning)).toBe(true);
    } finally {
      await thinking.dispose();
    }
    expect(engine.continuesReplies).toBe(true);
  });

  it('leaves no server process behind once disposed', async () => {
    const other = await LlamaServerEngine.start({ ...options, mmprojPath: null, parallel: 1 });
    const pid = other.pid!;
    expect(alive(pid)).toBe(true);
    await other.dispose();
    expect(alive(pid)).toBe(false);
    await expect(other.generate(ask(), { onStart: () => undefined, onOutput: () => undefined })).rejects.toBeInstanceOf(
      UpstreamError,
    );
  });
});
