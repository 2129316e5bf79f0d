import { MODEL_PRESETS } from '@conveyor/gguf';
import type { ApiKeyConfig, DeploymentConfig } from '../config.types.js';
import { isModelSource } from './deployment-id.js';

/** How a problem names a deployment's field: by its path in the file, or by its environment variable. */
export type FieldName = (index: number, field: 'id' | 'model' | 'alias' | 'auth') => string;
export const fileField: FieldName = (i, field) => `deployments[${i}].${field}`;
export const envField: FieldName = (_i, field) => (field === 'model' ? 'MODEL' : field === 'id' ? 'MODEL_ID' : field);

/** What no single deployment shows: ids and aliases used twice, models nothing can load, private apps without keys. */
export function checkDeployments(
  deployments: DeploymentConfig[],
  keys: ApiKeyConfig[],
  problems: string[],
  name: FieldName,
): void {
  const ids = new Set<string>();
  const aliases = new Set<string>();
  for (const [i, d] of deployments.entries()) {
    if (ids.has(d.id)) problems.push(`${name(i, 'id')} "${d.id}" is used twice`);
    ids.add(d.id);
    // An upstream's model is whatever name it serves it under; a simulated one is only a name.
    if (d.engine.kind !== 'openai' && d.engine.kind !== 'simulated' && !isModelSource(d.model)) {
      problems.push(
        `${name(i, 'model')} must be a preset (${Object.keys(MODEL_PRESETS).join(', ')}), a .gguf path or an hf: URI (got "${d.model}")`,
      );
    }
    if (d.alias) {
      const path = `${d.alias.org}/${d.alias.app}`;
      if (aliases.has(path)) problems.push(`${name(i, 'alias')} ${path} is used twice`);
      aliases.add(path);
      if (d.auth === 'private' && keys.length === 0) {
        problems.push(`${name(i, 'auth')} is private but no API key is configured (apiKeys in the file, or API_KEYS)`);
      }
    }
  }
}
