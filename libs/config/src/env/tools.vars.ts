import type { EnvVarSpec } from './env-var.js';

export const TOOLS_VARS = {
  CONVEYOR_URL: {
    kind: 'text',
    default: 'http://127.0.0.1:8000/v1',
    allowedText: "the API's base URL, `/v1` included",
    meaning: '`npm run batch`: the platform to submit to, unless `--base-url` names one.',
  },
  CONVEYOR_API_KEY: {
    kind: 'text',
    default: 'none',
    allowedText: 'a key',
    meaning: '`npm run batch`: the key to submit with, unless `--api-key` gives one.',
  },
  INIT_CWD: {
    kind: 'text',
    defaultText: 'set by npm',
    allowedText: 'a folder',
    meaning:
      '`npm run batch`: the folder the command was run in, which npm names here; relative paths are taken from it.',
  },
  LLAMA_SERVER_JOBS: {
    kind: 'text',
    defaultText: 'the number of CPUs',
    allowedText: 'a number of jobs',
    meaning: '`npm run build:llama-server`: parallel compile jobs.',
  },
} as const satisfies Record<string, EnvVarSpec>;
