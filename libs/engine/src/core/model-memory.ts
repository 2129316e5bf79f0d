import { stat } from 'node:fs/promises';
import { readGgufFileInfo } from 'node-llama-cpp';
import type { DeploymentConfig } from '@conveyor/config';
import { resolveModelSource, type ModelSourceLogger } from './model-source.js';

const MIB = 2 ** 20;

/**
 * The MiB a deployment's model and contexts take in a worker: its `memoryMb` where the operator set it;
 * for a model the worker runs (node-llama-cpp or a llama-server child), the GGUF file (and projector)
 * plus the KV cache of its sequences at f16, from the file's own header; nothing for an upstream or a
 * simulated engine, whose memory is elsewhere. Compute buffers and the host prompt cache, which grow as
 * they are used, are not counted: the budget is of what a load takes at once.
 */
export async function estimateModelMemoryMb(
  deployment: DeploymentConfig,
  modelsDir: string,
  logger: ModelSourceLogger,
): Promise<number> {
  if (deployment.memoryMb !== null) return deployment.memoryMb;
  const { engine } = deployment;
  if (engine.kind !== 'llama-cpp' && engine.kind !== 'llama-server') return 0;
  const path = await resolveModelSource(deployment.model, modelsDir, logger);
  let bytes = (await stat(path)).size;
  if (engine.kind === 'llama-server' && engine.mmproj) {
    bytes += (await stat(await resolveModelSource(engine.mmproj, modelsDir, logger))).size;
  }
  if (deployment.lora) bytes += (await stat(await resolveModelSource(deployment.lora.path, modelsDir, logger))).size;
  bytes += await kvCacheBytes(path, deployment.contextSize * deployment.parallel);
  return Math.ceil(bytes / MIB);
}

/** Bytes of an f16 KV cache of `cells` tokens for the model at `path`, from its GGUF header (0 where it does not say). */
async function kvCacheBytes(path: string, cells: number): Promise<number> {
  const info = await readGgufFileInfo(path, { readTensorInfo: false, logWarnings: false });
  const meta = info.metadata as unknown as Record<string, Record<string, unknown>>;
  const arch = String((meta.general as { architecture?: string } | undefined)?.architecture ?? '');
  const model = meta[arch] as
    | { block_count?: number; embedding_length?: number; attention?: { head_count?: number; head_count_kv?: number } }
    | undefined;
  const layers = Number(model?.block_count ?? 0);
  const embedding = Number(model?.embedding_length ?? 0);
  const heads = Number(model?.attention?.head_count ?? 1) || 1;
  const kvHeads = Number(model?.attention?.head_count_kv ?? heads);
  // K and V, each of the key-value heads' width, two bytes a value.
  return 2 * layers * ((embedding * kvHeads) / heads) * cells * 2;
}
