// What a llama-server deployment is set up with, and the command line its server is started with.
import type { EngineLogger } from '../core/engine-factory.js';
import type { ImageSource } from '../core/image-source.port.js';

export interface LlamaServerEngineOptions {
  /** The deployment's id, as metrics name it; the model's path when absent. */
  deployment?: string;
  /** The llama-server binary (see findLlamaServer). */
  binary: string;
  modelPath: string;
  /** The vision projector's GGUF; null: text only. */
  mmprojPath: string | null;
  /** The most tokens one image may take; null: the projector's own. */
  imageMaxTokens: number | null;
  /** Tokens of context per sequence (llama-server's slot). */
  contextSize: number;
  parallel: number;
  threads: number;
  flashAttention: 'auto' | 'on' | 'off';
  /** Offload to a GPU (llama-server's own choice of layers); false keeps everything on the CPU. */
  gpu: boolean;
  /** `think`: the thought segment (`<think>…</think>`) comes back as reasoning; otherwise it stays in the text. */
  reasoningParser: 'think' | null;
  images: ImageSource | null;
  logger: EngineLogger;
  /** How long loading the model may take. */
  startTimeoutMs?: number;
  /** First and longest wait before a restart; the wait doubles while restarts keep failing. */
  restartDelayMs?: { min: number; max: number };
  /** How long a generation waits for a restarting server before it fails (and is retried). */
  readyTimeoutMs?: number;
  /** How long the server may take to stop after SIGTERM before it is killed. */
  stopGraceMs?: number;
}

/** The command line of a deployment's server, but where it listens. */
export function llamaServerArgs(o: LlamaServerEngineOptions): string[] {
  const args = [
    '-m',
    o.modelPath,
    '-np',
    String(o.parallel),
    // llama-server divides its context among its slots: each gets contextSize, as in process.
    '-c',
    String(o.contextSize * o.parallel),
    '-t',
    String(o.threads),
    '-fa',
    o.flashAttention,
    // The model's own chat template, as node-llama-cpp renders it in process.
    '--jinja',
    '--no-webui',
    // Thoughts stay in the text: the engine splits them out itself, as in process, for any template
    // (llama.cpp's own parser only knows the templates it recognizes).
    '--reasoning-format',
    'none',
  ];
  if (o.mmprojPath) args.push('--mmproj', o.mmprojPath);
  if (o.mmprojPath && o.imageMaxTokens !== null) args.push('--image-max-tokens', String(o.imageMaxTokens));
  if (!o.gpu) args.push('-ngl', '0', '--no-mmproj-offload');
  return args;
}
