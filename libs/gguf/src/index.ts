export { generateModel, ensurePresetModel, presetTokenId } from './generate-model.js';
export { MODEL_PRESETS, isModelPresetName } from './model-presets.js';
export type { ModelPreset, ModelPresetName } from './model-presets.js';
