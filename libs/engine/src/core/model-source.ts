import { access } from 'node:fs/promises';
import { ensurePresetAdapter, ensurePresetModel, isAdapterPresetName, isModelPresetName } from '@conveyor/gguf';
import { resolveModelFile } from 'node-llama-cpp';

export interface ModelSourceLogger {
  log(message: string): void;
}

/**
 * Turns a deployment's `model` into a local GGUF path: a preset is generated
 * on first use, an `hf:` URI is downloaded (with progress) by node-llama-cpp
 * into the models folder, and a plain path must already exist.
 */
export async function resolveModelSource(model: string, modelsDir: string, logger: ModelSourceLogger): Promise<string> {
  if (isAdapterPresetName(model)) return ensurePresetAdapter(model, modelsDir);
  if (isModelPresetName(model)) {
    const path = await ensurePresetModel(model, modelsDir);
    logger.log(
      `Serving "${model}", a RANDOM-WEIGHT model generated for smoke tests: its replies are gibberish. ` +
        'To serve a real model set MODEL=/path/to/model.gguf or MODEL=hf:<user>/<repo>:<quant>.',
    );
    return path;
  }
  if (model.startsWith('hf:')) {
    let lastPercent = -10;
    return resolveModelFile(model, {
      directory: modelsDir,
      cli: false,
      onProgress: ({ downloadedSize, totalSize }) => {
        const percent = totalSize ? Math.floor((downloadedSize / totalSize) * 100) : 0;
        if (percent >= lastPercent + 10) {
          lastPercent = percent;
          logger.log(`Downloading ${model}: ${percent}% of ${(totalSize / 2 ** 20).toFixed(0)} MiB`);
        }
      },
    });
  }
  try {
    await access(model);
  } catch {
    throw new Error(`Model file not found: ${model}`);
  }
  return model;
}
