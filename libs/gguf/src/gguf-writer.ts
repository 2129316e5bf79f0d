import { open, rename, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { toHalf, fromHalf } from './half-float.js';

/** GGUF value types (ggml's gguf_type). */
export enum GgufType {
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
}

/** ggml tensor types this writer can emit. */
export enum GgmlType {
  F32 = 0,
  F16 = 1,
  Q8_0 = 8,
}

export type GgufValue =
  | { type: GgufType.UINT32; value: number }
  | { type: GgufType.FLOAT32; value: number }
  | { type: GgufType.BOOL; value: boolean }
  | { type: GgufType.STRING; value: string }
  | { type: GgufType.ARRAY; itemType: GgufType.STRING; value: readonly string[] }
  | { type: GgufType.ARRAY; itemType: GgufType.UINT32 | GgufType.INT32 | GgufType.FLOAT32; value: ArrayLike<number> };

export interface GgufTensor {
  name: string;
  /** ggml order: dims[0] is the innermost (row length). */
  dims: readonly number[];
  type: GgmlType;
  /** Produces the tensor's values in row-major ggml order, on demand, so large models never sit in memory twice. */
  values: () => Float32Array;
}

const ALIGNMENT = 32;
const Q8_BLOCK = 32;

const align = (n: number): number => Math.ceil(n / ALIGNMENT) * ALIGNMENT;

function tensorByteSize(t: GgufTensor): number {
  const count = t.dims.reduce((a, b) => a * b, 1);
  switch (t.type) {
    case GgmlType.F32:
      return count * 4;
    case GgmlType.F16:
      return count * 2;
    case GgmlType.Q8_0:
      if (t.dims[0] % Q8_BLOCK !== 0)
        throw new Error(`${t.name}: row length must be a multiple of ${Q8_BLOCK} for Q8_0`);
      return (count / Q8_BLOCK) * (2 + Q8_BLOCK);
  }
}

class ByteSink {
  private chunks: Buffer[] = [];
  private size = 0;

  push(buf: Buffer): void {
    this.chunks.push(buf);
    this.size += buf.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  get length(): number {
    return this.size;
  }
  take(): Buffer {
    const out = Buffer.concat(this.chunks);
    this.chunks = [];
    this.size = 0;
    return out;
  }
}

function writeValue(sink: ByteSink, v: GgufValue): void {
  sink.u32(v.type);
  switch (v.type) {
    case GgufType.UINT32:
      return sink.u32(v.value);
    case GgufType.FLOAT32:
      return sink.f32(v.value);
    case GgufType.BOOL:
      return sink.push(Buffer.from([v.value ? 1 : 0]));
    case GgufType.STRING:
      return sink.str(v.value);
    case GgufType.ARRAY:
      sink.u32(v.itemType);
      sink.u64(v.value.length);
      if (v.itemType === GgufType.STRING) {
        for (const s of v.value as readonly string[]) sink.str(s);
      } else {
        const nums = v.value as ArrayLike<number>;
        for (let i = 0; i < nums.length; i++) {
          if (v.itemType === GgufType.UINT32) sink.u32(nums[i]);
          else if (v.itemType === GgufType.INT32) sink.i32(nums[i]);
          else sink.f32(nums[i]);
        }
      }
  }
}

function encodeTensor(t: GgufTensor): Buffer {
  const values = t.values();
  switch (t.type) {
    case GgmlType.F32:
      return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
    case GgmlType.F16: {
      const out = Buffer.alloc(values.length * 2);
      for (let i = 0; i < values.length; i++) out.writeUInt16LE(toHalf(values[i]), i * 2);
      return out;
    }
    case GgmlType.Q8_0: {
      const blocks = values.length / Q8_BLOCK;
      const out = Buffer.alloc(blocks * (2 + Q8_BLOCK));
      for (let b = 0; b < blocks; b++) {
        let amax = 0;
        for (let i = 0; i < Q8_BLOCK; i++) amax = Math.max(amax, Math.abs(values[b * Q8_BLOCK + i]));
        const dBits = toHalf(amax / 127);
        const d = fromHalf(dBits);
        const base = b * (2 + Q8_BLOCK);
        out.writeUInt16LE(dBits, base);
        for (let i = 0; i < Q8_BLOCK; i++) {
          const q = d === 0 ? 0 : Math.max(-127, Math.min(127, Math.round(values[b * Q8_BLOCK + i] / d)));
          out.writeInt8(q, base + 2 + i);
        }
      }
      return out;
    }
  }
}

/** A GGUF v3 file's header: metadata and tensor infos, padded to where the tensor data starts. */
function ggufHeader(metadata: Record<string, GgufValue>, tensors: readonly GgufTensor[]): Buffer {
  const header = new ByteSink();
  header.push(Buffer.from('GGUF', 'ascii'));
  header.u32(3);
  header.u64(tensors.length);
  const kv = { ...metadata, 'general.alignment': { type: GgufType.UINT32, value: ALIGNMENT } as GgufValue };
  header.u64(Object.keys(kv).length);
  for (const [key, value] of Object.entries(kv)) {
    header.str(key);
    writeValue(header, value);
  }
  let offset = 0;
  for (const t of tensors) {
    header.str(t.name);
    header.u32(t.dims.length);
    for (const d of t.dims) header.u64(d);
    header.u32(t.type);
    header.u64(offset);
    offset = align(offset + tensorByteSize(t));
  }
  const headerBytes = header.take();
  return Buffer.concat([headerBytes, Buffer.alloc(align(headerBytes.length) - headerBytes.length)]);
}

/**
 * Whether the file at `path` starts with the header `writeGguf` would write for this metadata and these
 * tensors (a file written before the metadata changed does not); the tensor data is not read.
 */
export async function ggufHeaderMatches(
  path: string,
  metadata: Record<string, GgufValue>,
  tensors: readonly GgufTensor[],
): Promise<boolean> {
  const expected = ggufHeader(metadata, tensors);
  const file = await open(path, 'r');
  try {
    const actual = Buffer.alloc(expected.length);
    const { bytesRead } = await file.read(actual, 0, actual.length, 0);
    return bytesRead === expected.length && actual.equals(expected);
  } finally {
    await file.close();
  }
}

/**
 * Writes a GGUF v3 file. The file is written under a temporary name and renamed
 * into place, so a crash mid-write never leaves a truncated model behind.
 */
export async function writeGguf(
  path: string,
  metadata: Record<string, GgufValue>,
  tensors: readonly GgufTensor[],
): Promise<void> {
  const padded = ggufHeader(metadata, tensors);

  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const file = await open(tmp, 'w');
  try {
    await file.write(padded);
    for (const t of tensors) {
      const data = encodeTensor(t);
      await file.write(data);
      const pad = align(data.length) - data.length;
      if (pad) await file.write(Buffer.alloc(pad));
    }
  } finally {
    await file.close();
  }
  await rename(tmp, path);
}
