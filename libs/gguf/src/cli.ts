// Generates a preset model: node dist/libs/gguf/src/cli.js <tiny|think|vision|bench> [directory]
import { resolve } from 'node:path';
import { ensurePresetModel, presetProjectorPath } from './generate-model.js';
import { MODEL_PRESETS, isModelPresetName } from './model-presets.js';

const [name = 'tiny', dir = 'models'] = process.argv.slice(2);
if (!isModelPresetName(name)) {
  console.error(`Unknown preset "${name}"; choose one of: ${Object.keys(MODEL_PRESETS).join(', ')}`);
  process.exit(2);
}
console.log(await ensurePresetModel(name, resolve(dir)));
// A vision preset's projector is generated with it; say where.
const projector = presetProjectorPath(name, resolve(dir));
if (projector) console.log(projector);
