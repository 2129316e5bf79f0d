import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePresetModel, generateModel, presetProjectorPath } from './generate-model.js';
import { MODEL_PRESETS } from './model-presets.js';

/** The metadata keys (with their GGUF value types) and tensor names of a GGUF file, read from its header. */
function readHeader(bytes: Buffer): { keys: Map<string, number>; tensors: Map<string, number[]> } {
  let at = 8;
  const u32 = () => ((at += 4), bytes.readUInt32LE(at - 4));
  const u64 = () => ((at += 8), Number(bytes.readBigUInt64LE(at - 8)));
  const str = () => {
    const length = u64();
    at += length;
    return bytes.toString('utf8', at - length, at);
  };
  const SIZES: Record<number, number> = { 4: 4, 5: 4, 6: 4, 7: 1 };
  const skipValue = (type: number): void => {
    if (type === 8) str();
    else if (type === 9) {
      const item = u32();
      const count = u64();
      for (let i = 0; i < count; i++) skipValue(item);
    } else at += SIZES[type]!;
  };
  const tensorCount = u64();
  const keyCount = u64();
  const keys = new Map<string, number>();
  for (let i = 0; i < keyCount; i++) {
    const key = str();
    const type = u32();
    keys.set(key, type);
    skipValue(type);
  }
  const tensors = new Map<string, number[]>();
  for (let i = 0; i < tensorCount; i++) {
    const name = str();
    const dims = Array.from({ length: u32() }, u64);
    u32();
    u64();
    tensors.set(name, dims);
  }
  return { keys, tensors };
}

describe('generateModel(tiny)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'conveyor-gguf-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the same bytes twice, as a GGUF v3 file', async () => {
    const a = join(dir, 'a.gguf');
    const b = join(dir, 'sub', 'b.gguf');
    await generateModel(MODEL_PRESETS.tiny, a);
    await generateModel(MODEL_PRESETS.tiny, b);
    const [bytesA, bytesB] = await Promise.all([readFile(a), readFile(b)]);
    expect(bytesA.length).toBeGreaterThan(0);
    expect(bytesA.equals(bytesB)).toBe(true);
    expect(bytesA.subarray(0, 4).toString('ascii')).toBe('GGUF');
    expect(bytesA.readUInt32LE(4)).toBe(3);
    // Tensor data is 32-byte aligned, so the file length is too.
    expect(bytesA.length % 32).toBe(0);
  });

  it('readies the vision preset with its projector beside it: the tiny model, and a LLaVA-style mmproj', async () => {
    const model = await ensurePresetModel('vision', join(dir, 'vision'));
    const projector = presetProjectorPath('vision', join(dir, 'vision'));
    expect(presetProjectorPath('tiny', dir)).toBeNull();
    expect(projector).toBe(join(dir, 'vision', 'conveyor-tiny-vision-mmproj.gguf'));

    // The text model is tiny's, weight for weight.
    const tiny = join(dir, 'tiny.gguf');
    await generateModel(MODEL_PRESETS.tiny, tiny);
    const [text, tinyText] = await Promise.all([readFile(model), readFile(tiny)]);
    expect(readHeader(text).tensors).toEqual(readHeader(tinyText).tensors);

    const { keys, tensors } = readHeader(await readFile(projector!));
    // Every key llama.cpp's projector loader requires, with the type it checks (4 u32, 6 f32, 7 bool, 8 string, 9 array).
    expect(Object.fromEntries(keys)).toMatchObject({
      'general.architecture': 8,
      'clip.has_vision_encoder': 7,
      'clip.projector_type': 8,
      'clip.vision.image_size': 4,
      'clip.vision.patch_size': 4,
      'clip.vision.embedding_length': 4,
      'clip.vision.feed_forward_length': 4,
      'clip.vision.projection_dim': 4,
      'clip.vision.attention.head_count': 4,
      'clip.vision.block_count': 4,
      'clip.vision.attention.layer_norm_epsilon': 6,
      'clip.vision.image_mean': 9,
      'clip.vision.image_std': 9,
    });
    expect(tensors.get('v.patch_embd.weight')).toEqual([8, 8, 3, 64]);
    expect(tensors.get('v.position_embd.weight')).toEqual([64, 16]);
    expect(tensors.get('v.blk.1.ffn_up.weight')).toEqual([64, 96]);
    expect(tensors.get('v.blk.1.ffn_down.weight')).toEqual([96, 64]);
    expect(tensors.get('mm.0.weight')).toEqual([64, 128]);
    // The projector's output is the text model's embedding width.
    expect(tensors.get('mm.2.weight')).toEqual([128, MODEL_PRESETS.vision.embedding]);
    expect(tensors.get('mm.2.bias')).toEqual([MODEL_PRESETS.vision.embedding]);
  });
});
