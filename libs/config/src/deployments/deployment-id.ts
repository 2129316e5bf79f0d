import { basename } from 'node:path';
import { MODEL_PRESETS, isModelPresetName } from '@conveyor/gguf';

/** Deployment ids become queue names and model ids: keep them to characters both accept. */
export const DEPLOYMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;

/** The id clients send as `model`, derived from what is served unless MODEL_ID says otherwise. */
export function deriveDeploymentId(model: string): string {
  if (isModelPresetName(model)) return MODEL_PRESETS[model].name;
  const last = model.replace(/^hf:/, '').split('/').pop() ?? model;
  return last.replace(/:.*$/, '').replace(/\.gguf$/i, '');
}

/** What llama.cpp can load: a generated preset, a GGUF path or an hf: URI. */
export const isModelSource = (model: string): boolean =>
  isModelPresetName(model) || model.startsWith('hf:') || basename(model).toLowerCase().endsWith('.gguf');
