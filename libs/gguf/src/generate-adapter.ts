import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { GgmlType, ggufHeaderMatches, GgufType, writeGguf, type GgufTensor, type GgufValue } from './gguf-writer.js';
import { MODEL_PRESETS, type ModelPresetName } from './model-presets.js';
import { randomWeights } from './generate-model.js';

/**
 * A LoRA adapter of a generated model: low-rank updates (`lora_a`, `lora_b`) of every layer's attention
 * query and value projections, random like the model, large enough that its replies differ from the base
 * model's on the same seed.
 */
export interface AdapterPreset {
  name: string;
  /** The preset it adapts: its architecture and widths. */
  base: ModelPresetName;
  rank: number;
  alpha: number;
  seed: number;
}

export const ADAPTER_PRESETS = {
  'tiny-lora': { name: 'conveyor-tiny-lora', base: 'tiny', rank: 8, alpha: 16, seed: 6 },
} as const satisfies Record<string, AdapterPreset>;

export type AdapterPresetName = keyof typeof ADAPTER_PRESETS;

export function isAdapterPresetName(name: string): name is AdapterPresetName {
  return Object.hasOwn(ADAPTER_PRESETS, name);
}

// The keys llama.cpp's adapter loader (src/llama-adapter.cpp) checks: an adapter, of type lora, of the base's architecture.
function adapterMetadata(preset: AdapterPreset): Record<string, GgufValue> {
  return {
    'general.architecture': { type: GgufType.STRING, value: 'llama' },
    'general.type': { type: GgufType.STRING, value: 'adapter' },
    'general.name': { type: GgufType.STRING, value: preset.name },
    'adapter.type': { type: GgufType.STRING, value: 'lora' },
    'adapter.lora.alpha': { type: GgufType.FLOAT32, value: preset.alpha },
  };
}

function adapterTensors(preset: AdapterPreset): GgufTensor[] {
  const base = MODEL_PRESETS[preset.base];
  const kvDim = (base.embedding / base.heads) * base.kvHeads;
  const random = randomWeights(preset.seed);
  const tensors: GgufTensor[] = [];
  for (let l = 0; l < base.layers; l++) {
    // A weight of [in, out] is updated by lora_b · lora_a, with lora_a [in, rank] and lora_b [rank, out].
    for (const [name, out] of [
      ['attn_q', base.embedding],
      ['attn_v', kvDim],
    ] as const) {
      const a: [number, number] = [base.embedding, preset.rank];
      const b: [number, number] = [preset.rank, out];
      tensors.push(
        { name: `blk.${l}.${name}.weight.lora_a`, dims: a, type: GgmlType.F32, values: random(a, 0.5) },
        { name: `blk.${l}.${name}.weight.lora_b`, dims: b, type: GgmlType.F32, values: random(b, 0.5) },
      );
    }
  }
  return tensors;
}

/**
 * Returns the adapter preset's GGUF path in `dir`, generating it on first use (or again where an earlier
 * version of the preset wrote another).
 */
export async function ensurePresetAdapter(name: AdapterPresetName, dir: string): Promise<string> {
  const preset: AdapterPreset = ADAPTER_PRESETS[name];
  const path = join(dir, `${preset.name}.gguf`);
  const metadata = adapterMetadata(preset);
  const tensors = adapterTensors(preset);
  const present = await access(path).then(
    () => true,
    () => false,
  );
  if (!present || !(await ggufHeaderMatches(path, metadata, tensors))) await writeGguf(path, metadata, tensors);
  return path;
}
