import { getLlama, type Llama } from 'node-llama-cpp';

/**
 * node-llama-cpp turns flash attention off unless asked; llama.cpp (and llama-server) default to
 * `auto`, which turns it on for the CPU. On a small CPU model it was ~25% faster per token.
 */
export function flashAttention(option: 'auto' | 'on' | 'off' | undefined): 'auto' | boolean {
  return option === 'on' ? true : option === 'off' ? false : 'auto';
}

/** A GPU was asked for and none is usable on this machine. */
export class GpuUnavailableError extends Error {
  constructor() {
    super(
      'This worker serves the gpu pool, but no usable GPU (CUDA, Vulkan or Metal) was found. ' +
        'Run it on a GPU machine, serve the cpu pool instead, or set ALLOW_CPU_FALLBACK=1 to run gpu deployments on the CPU.',
    );
    this.name = 'GpuUnavailableError';
  }
}

const runtimes = new Map<boolean, Promise<Llama>>();

/** One llama.cpp runtime per process and backend choice, shared by every model the worker loads. */
export function runtime(gpu: boolean): Promise<Llama> {
  let llama = runtimes.get(gpu);
  if (!llama) {
    // build: 'never' — a failed binary check must not silently compile llama.cpp for minutes.
    llama = getLlama({ build: 'never', gpu: gpu ? 'auto' : false });
    runtimes.set(gpu, llama);
  }
  return llama;
}

/** The runtime for a model: a GPU one when asked for and usable, the CPU one when allowed instead. */
export async function usableRuntime(gpu: boolean, allowCpuFallback: boolean | undefined): Promise<Llama> {
  const llama = await runtime(gpu);
  if (!gpu || llama.gpu !== false) return llama;
  if (!allowCpuFallback) throw new GpuUnavailableError();
  return runtime(false);
}
