import { basename } from 'node:path';
import { isModelPresetName, presetProjectorPath } from '@conveyor/gguf';
import type { DeploymentTask, EngineConfig } from './config.types.js';

export const ENGINE_KINDS = ['llama-cpp', 'llama-server', 'openai', 'simulated'] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];

/** A deployment's engine fields as the deployments file or the environment gives them, not yet checked. */
export interface EngineFields {
  /** The served model as given; for `openai`, the upstream's model name (or absent, with `upstream.model`). */
  model?: string;
  task: DeploymentTask;
  engine?: EngineKind;
  mmproj?: string;
  imageMaxTokens?: number;
  vision?: boolean;
  upstream?: { url?: string; apiKey?: string; apiKeyEnv?: string; model?: string };
  simulated?: { ttftMs?: number; tpotMs?: number; outputTokens?: number; text?: string };
}

/** What a problem calls each field: its path in the deployments file, or its environment variable. */
export type EngineFieldNames = Record<
  | 'model'
  | 'task'
  | 'engine'
  | 'mmproj'
  | 'imageMaxTokens'
  | 'vision'
  | 'upstream'
  | 'upstreamUrl'
  | 'upstreamApiKey'
  | 'upstreamApiKeyEnv'
  | 'upstreamModel'
  | 'simulated',
  string
>;

/** What resolving an engine needs beyond its fields. */
export interface EngineContext {
  /** The value of a variable the file names (`upstream.apiKeyEnv`), trimmed; undefined when unset or blank. */
  named: (name: string) => string | undefined;
  /** Where presets are generated, and so where a preset's projector is. */
  modelsDir: string;
}

export interface ResolvedEngine {
  /** What the deployment serves: a preset, a GGUF path or an hf: URI; for `openai`, the upstream's model. */
  model: string;
  engine: EngineConfig;
  vision: boolean;
}

const isGgufSource = (source: string): boolean =>
  source.startsWith('hf:') || basename(source).toLowerCase().endsWith('.gguf');

/**
 * Settles which engine runs a deployment, and whether it takes images, from the fields given. A projector
 * (`mmproj`, or a preset that comes with one) implies `llama-server`, an `upstream` implies `openai`;
 * `llama-cpp` is the default. Each contradiction is one problem naming the fields at fault.
 */
export function resolveEngine(
  fields: EngineFields,
  names: EngineFieldNames,
  context: EngineContext,
  problems: string[],
): ResolvedEngine {
  const presetProjector =
    fields.model !== undefined && isModelPresetName(fields.model)
      ? presetProjectorPath(fields.model, context.modelsDir)
      : null;
  const implied: Array<{ kind: EngineKind; by: string }> = [];
  if (fields.mmproj !== undefined) implied.push({ kind: 'llama-server', by: names.mmproj });
  if (fields.upstream !== undefined) implied.push({ kind: 'openai', by: names.upstream });
  if (fields.simulated !== undefined) implied.push({ kind: 'simulated', by: names.simulated });
  if (presetProjector !== null && fields.upstream === undefined)
    implied.push({ kind: 'llama-server', by: `${names.model} ${fields.model} (a preset with a vision projector)` });

  let kind: EngineKind = fields.engine ?? implied[0]?.kind ?? 'llama-cpp';
  for (const { kind: wants, by } of implied) {
    if (wants !== kind) {
      problems.push(
        fields.engine
          ? `${by} needs engine ${wants}, but ${names.engine} is ${fields.engine}`
          : `${by} needs engine ${wants}, which ${implied[0]!.by} rules out`,
      );
    }
  }
  if (kind !== 'llama-cpp' && fields.task !== 'generate') {
    problems.push(`${names.task} ${fields.task} runs on engine llama-cpp only (${names.engine} is ${kind})`);
    kind = 'llama-cpp';
  }

  if (kind === 'openai') return upstreamEngine(fields, names, context.named, problems);
  if (kind === 'simulated') return simulatedEngine(fields, names, problems);

  const model = fields.model ?? 'tiny';
  if (kind === 'llama-cpp') {
    if (fields.imageMaxTokens !== undefined)
      problems.push(`${names.imageMaxTokens} needs a vision projector (${names.mmproj}) on engine llama-server`);
    if (fields.vision === true)
      problems.push(
        `${names.vision} needs a vision projector (${names.mmproj}, engine llama-server) or an openai upstream that takes images`,
      );
    return { model, engine: { kind: 'llama-cpp' }, vision: false };
  }

  const mmproj = fields.mmproj ?? presetProjector;
  if (fields.mmproj !== undefined && !isGgufSource(fields.mmproj))
    problems.push(`${names.mmproj} must be a .gguf path or an hf: URI (got "${fields.mmproj}")`);
  if (mmproj === null && fields.imageMaxTokens !== undefined)
    problems.push(`${names.imageMaxTokens} needs a vision projector (${names.mmproj})`);
  if (mmproj === null && fields.vision === true)
    problems.push(`${names.vision} needs a vision projector (${names.mmproj})`);
  return {
    model,
    engine: { kind: 'llama-server', mmproj, imageMaxTokens: fields.imageMaxTokens ?? null },
    vision: mmproj !== null && fields.vision !== false,
  };
}

/**
 * An OpenAI-compatible server already running. Whether it takes images is the operator's to say: the
 * platform cannot know. The key comes from the file, or from the variable the file names, never both.
 */
function upstreamEngine(
  fields: EngineFields,
  names: EngineFieldNames,
  named: EngineContext['named'],
  problems: string[],
): ResolvedEngine {
  const upstream = fields.upstream ?? {};
  const url = upstream.url?.trim().replace(/\/+$/, '');
  if (!url) problems.push(`${names.upstreamUrl} is required for engine openai: the upstream's base URL, /v1 included`);
  else if (!isHttpUrl(url))
    problems.push(`${names.upstreamUrl} must be an http:// or https:// URL (got "${upstream.url}")`);

  let apiKey: string | null = upstream.apiKey?.trim() || null;
  if (upstream.apiKeyEnv !== undefined) {
    if (apiKey) problems.push(`${names.upstreamApiKey} and ${names.upstreamApiKeyEnv} are exclusive: set one`);
    apiKey = named(upstream.apiKeyEnv) ?? null;
    if (!apiKey) problems.push(`${names.upstreamApiKeyEnv} names ${upstream.apiKeyEnv}, which is not set`);
  }

  const model = fields.model ?? upstream.model;
  if (!model) problems.push(`${names.model} or ${names.upstreamModel} must name the model the upstream serves`);
  if (fields.imageMaxTokens !== undefined) problems.push(`${names.imageMaxTokens} is for engine llama-server only`);
  return {
    model: model ?? '',
    engine: { kind: 'openai', url: url ?? '', apiKey, model: upstream.model ?? null },
    vision: fields.vision ?? false,
  };
}

/** The pace and text of a simulated deployment that leaves them out. */
export const SIMULATED_DEFAULTS = {
  ttftMs: 100,
  tpotMs: 20,
  outputTokens: 64,
  text: 'The quick brown fox jumps over the lazy dog.',
} as const;

/**
 * No model: replies of a fixed text at a configured pace, for capacity and fault tests. The model is
 * only a name, and a simulated deployment takes no images.
 */
function simulatedEngine(fields: EngineFields, names: EngineFieldNames, problems: string[]): ResolvedEngine {
  const given = fields.simulated ?? {};
  for (const field of ['mmproj', 'imageMaxTokens'] as const)
    if (fields[field] !== undefined) problems.push(`${names[field]} is not for engine simulated`);
  if (fields.vision === true) problems.push(`${names.vision} is not for engine simulated: it takes no images`);
  return {
    model: fields.model ?? 'simulated',
    engine: {
      kind: 'simulated',
      ttftMs: given.ttftMs ?? SIMULATED_DEFAULTS.ttftMs,
      tpotMs: given.tpotMs ?? SIMULATED_DEFAULTS.tpotMs,
      outputTokens: given.outputTokens ?? SIMULATED_DEFAULTS.outputTokens,
      text: given.text ?? SIMULATED_DEFAULTS.text,
    },
    vision: false,
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
