export {
  generateModel,
  generateProjector,
  ensurePresetModel,
  presetProjectorPath,
  presetTokenId,
} from './generate-model.js';
export { MODEL_PRESETS, isModelPresetName } from './model-presets.js';
export type { ModelPreset, ModelPresetName, ProjectorPreset } from './model-presets.js';
export {
  ADAPTER_PRESETS,
  ensurePresetAdapter,
  isAdapterPresetName,
  type AdapterPreset,
  type AdapterPresetName,
} from './generate-adapter.js';
