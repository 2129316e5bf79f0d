import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** @import { DistModules } from './dist.mjs' */
/** @typedef {{ model: string, path: string, deploymentId: string }} Model */

/**
 * The model a bench runs: a preset (generated into `modelsDir` on first use) or an existing .gguf file,
 * with the deployment id the platform derives for it. `dist` is the build whose generator and config run.
 * @param {string} dist
 * @param {string} name `--model` as given
 * @param {string} modelsDir
 * @returns {Promise<Model>}
 */
export async function resolveBenchModel(dist, name, modelsDir) {
  /**
   * @template {keyof DistModules} P
   * @param {P} path
   * @returns {Promise<DistModules[P]>}
   */
  const importDist = (path) => import(pathToFileURL(resolve(dist, path)).href);
  const { ensurePresetModel, isModelPresetName } = await importDist('libs/gguf/src/index.js');
  const { deriveDeploymentId } = await importDist('libs/config/src/index.js');
  if (isModelPresetName(name)) {
    const path = await ensurePresetModel(name, modelsDir);
    return { model: name, path, deploymentId: deriveDeploymentId(name) };
  }
  const path = resolve(name);
  if (!path.toLowerCase().endsWith('.gguf') || !existsSync(path))
    throw new Error(`--model must be tiny, bench or an existing .gguf file (got "${name}")`);
  return { model: path, path, deploymentId: deriveDeploymentId(path) };
}
