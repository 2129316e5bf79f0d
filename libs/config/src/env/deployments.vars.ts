import { ENGINE_KINDS } from '../engine-config.js';
import { DEPLOYMENT_TASKS } from '../config.types.js';
import type { EnvVarSpec } from './env-var.js';

/** The settings from CONTEXT_SIZE on are also the defaults of the deployments file's deployments. */
export const DEPLOYMENTS_VARS = {
  CONVEYOR_CONFIG: {
    kind: 'text',
    defaultText: 'none: one deployment from the variables below',
    allowedText: 'a YAML or JSON file',
    meaning:
      'The deployments file: several deployments, and API keys with rate limits (see [The deployments file](#the-deployments-file)).',
  },
  MODEL: {
    kind: 'text',
    defaultText: '`tiny`',
    allowedText: 'a preset (`tiny`, `think`, `vision`, `rerank`, `bench`), a `.gguf` path or an `hf:` URI',
    meaning:
      'Without a file: the model served, generated on first use for a preset, downloaded for an `hf:` URI; with an upstream, the name it serves the model under.',
  },
  MODEL_ID: {
    kind: 'text',
    defaultText: "derived from `MODEL`: a preset's model name, or the file's or repository's name",
    allowedText: '1-128 letters, digits, `.`, `_`, `-` or `/`',
    meaning: 'Without a file: the `model` clients send, which also names the queue.',
  },
  MODEL_ALIASES: {
    kind: 'text',
    defaultText: 'none',
    allowedText: '`name=deployment` pairs separated by commas; `*` and `?` in a name make it a pattern',
    meaning:
      "Other model names clients may send, each reaching a deployment's id, after the file's `modelAliases`: an exact name wins over patterns, the first pattern that matches over later ones; a last `*=<id>` sends every other name there (see [Model aliases](deployments.md#model-aliases)).",
  },
  TASK: {
    kind: 'enum',
    default: 'generate',
    values: DEPLOYMENT_TASKS,
    meaning:
      'Without a file: chat and text completions, embeddings (`/v1/embeddings`) only, or reranking (`/v1/rerank`) only.',
  },
  ENGINE: {
    kind: 'enum',
    default: 'llama-cpp',
    values: ENGINE_KINDS,
    defaultText: '`llama-cpp`; `llama-server` with a projector, `openai` with `UPSTREAM_URL`',
    meaning:
      'Without a file: what runs the model, node-llama-cpp in the worker, a llama.cpp server the worker starts, an OpenAI-compatible upstream, or no model at all (`simulated`, at its default pace: capacity and fault tests only).',
  },
  MMPROJ: {
    kind: 'text',
    defaultText: "none (the `vision` preset's own)",
    allowedText: 'a `.gguf` path or an `hf:` URI',
    meaning: 'Without a file: the vision projector, which implies `ENGINE=llama-server`.',
  },
  IMAGE_MAX_TOKENS: {
    kind: 'int',
    min: 1,
    max: 65_536,
    defaultText: "llama-server's own",
    meaning: "Without a file: the most tokens one image may take (llama-server's `--image-max-tokens`).",
  },
  VISION: {
    kind: 'bool',
    default: false,
    defaultText: '`false`; `true` with a projector',
    meaning: "Without a file: whether the deployment takes images; an upstream's operator says so.",
  },
  UPSTREAM_URL: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'an `http://` or `https://` URL, `/v1` included',
    meaning: 'Without a file: the base URL of an OpenAI-compatible server already running; implies `ENGINE=openai`.',
  },
  UPSTREAM_API_KEY: {
    kind: 'text',
    defaultText: 'none',
    allowedText: 'a key',
    meaning: "Without a file: the upstream's key.",
  },
  UPSTREAM_MODEL: {
    kind: 'text',
    defaultText: '`MODEL`',
    allowedText: "the upstream's model name",
    meaning: 'Without a file: the model the upstream is asked for.',
  },
  POOL: {
    kind: 'enum',
    default: 'cpu',
    values: ['cpu', 'gpu'],
    meaning: 'Without a file: the worker pool that serves the deployment.',
  },
  REASONING_PARSER: {
    kind: 'enum',
    default: 'none',
    values: ['none', 'think'],
    meaning:
      "Without a file: `think` returns a thinking model's `<think>…</think>` segment as `reasoning_content`; `none` leaves it in `content`.",
  },
  MODELS_DIR: {
    kind: 'text',
    default: 'models',
    allowedText: 'a folder (relative to the working directory)',
    meaning: 'Where presets are generated and `hf:` models downloaded.',
  },
  CONTEXT_SIZE: {
    kind: 'int',
    default: 4096,
    min: 64,
    max: 1 << 20,
    meaning: 'Tokens of context per sequence (per deployment in the file: `contextSize`).',
  },
  PROMPT_CHARS_PER_TOKEN: {
    kind: 'int',
    default: 32,
    min: 1,
    max: 1024,
    meaning:
      'The most characters one token of the model can stand for (`promptCharsPerToken`): the API refuses a prompt longer than `CONTEXT_SIZE` times this with 400 `context_length_exceeded` before queueing it.',
  },
  PARALLEL: {
    kind: 'int',
    default: 4,
    min: 1,
    max: 256,
    meaning: 'Sequences per worker, and so the jobs a worker runs at once (`parallel`).',
  },
  THREADS: {
    kind: 'int',
    default: 1,
    min: 1,
    max: 1024,
    meaning:
      "CPU threads per worker (`threads`). With node-llama-cpp's prebuilt CPU binary on small machines, more threads were much slower.",
  },
  FLASH_ATTENTION: {
    kind: 'enum',
    default: 'auto',
    values: ['auto', 'on', 'off'],
    meaning:
      "llama.cpp's flash attention (`flashAttention`): `auto` turns it on where the device supports it, which every CPU does.",
  },
  PROMPT_CACHE: {
    kind: 'enum',
    default: 'full',
    values: ['full', 'exact', 'off', 'true', 'false', '1', '0', 'yes', 'no'],
    allowedText: '`full`, `exact`, `off`; `true`, `1`, `yes` for `full`; `false`, `0`, `no` for `off`',
    meaning:
      "What a sequence keeps of finished replies for later prompts (`promptCache`): `full` reuses everything a sequence shares with the prompt, the last reply included, as llama-server, vLLM and SGLang do (a reply may differ from an uncached one where two tokens were all but tied); `exact` reuses only whole 256-token chunks computed as a prompt and cuts prompts at fixed positions, so replies are token for token what they are without it, at the cost of recomputing each conversation's last reply and holding streams up for a whole chunk while a prompt goes in; `off` computes every prompt from its first token, cut at the same positions as `exact`, so the two give the same replies.",
  },
  PROMPT_CACHE_RAM: {
    kind: 'int',
    min: 0,
    max: 1 << 24,
    defaultText: "8192, but at most a quarter of the worker's free memory when it starts",
    allowedText: 'MiB; 0 turns it off',
    meaning:
      "MiB of a worker's host memory per deployment (`promptCacheRam`) for prompt beginnings a new request pushes out of its sequences, as llama-server's `--cache-ram`: a prefix of at least 256 tokens about to be cut off a sequence is saved first, and a later prompt that begins with it has it read back instead of computed. The least recently used go past the budget. In-process engine only; nothing is kept under `PROMPT_CACHE=off`.",
  },
} as const satisfies Record<string, EnvVarSpec>;
