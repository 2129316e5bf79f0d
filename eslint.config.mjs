// Lint rules that catch what review misses: unawaited promises, non-exhaustive switches,
// loose equality, feature folders of the API reaching into each other, and the layers docs/design/ describes.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * API feature folders: each may use the shared layers (generation, dialects, repositories, deployments,
 * errors, auth, platform), never another feature. hosted-routes/ routes the hosted forms' paths to the
 * features' own handlers, so it may use them; no feature may use hosted-routes/.
 */
const API_FEATURES = [
  'chat',
  'completions',
  'responses',
  'embeddings',
  'messages',
  'tokenize',
  'batches',
  'files',
  'models',
  'usage',
  'keys',
];

/** @type {import('eslint').Linter.Config[]} */
const featureBoundaries = API_FEATURES.map((feature) => ({
  files: [`apps/api/src/${feature}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [...API_FEATURES.filter((other) => other !== feature), 'hosted-routes'].map((other) => ({
          group: [`../${other}/*`, `../../${other}/*`],
          message: `Feature folders do not import each other: move what ${feature}/ needs from ${other}/ to a shared module.`,
        })),
      },
    ],
  },
}));

/**
 * The structural sentences of docs/design/ as rules, so the pages cannot drift from the code. Each entry
 * is one sentence there; `@typescript-eslint/no-restricted-imports` carries them, beside the feature
 * folders' `no-restricted-imports`, so neither replaces the other.
 */
const NOT_TESTS = ['**/*.spec.ts', '**/*.medium-spec.ts', '**/*.e2e-spec.ts'];
const REDIS_CLIENTS = ['ioredis', 'bullmq', '@conveyor/redis', '@conveyor/bullmq-seam'];
/** @type {import('eslint').Linter.Config[]} */
const layerRules = [
  {
    // where-code-goes: libs/openai and libs/queue (wire types, queue contract) import nothing else.
    files: ['libs/openai/src/**/*.ts', 'libs/queue/src/**/*.ts'],
    ignores: NOT_TESTS,
    restrict: {
      patterns: [
        {
          group: ['@conveyor/*', '../../*'],
          message:
            'The wire types and the queue contract import nothing else of the project (docs/design/where-code-goes.md).',
        },
      ],
    },
  },
  {
    // where-code-goes: libraries are imported by their alias, never by a relative path into another library.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: NOT_TESTS,
    restrict: {
      patterns: [
        {
          group: ['**/libs/*', '../../*/src/*', '../../*/src'],
          message:
            'Import a library by its alias, @conveyor/<name>, never by a relative path (docs/design/where-code-goes.md).',
        },
      ],
    },
  },
  {
    // architecture: controller (HTTP shape) → service (use case) → repository or port; services and
    // controllers never see a Redis client or BullMQ.
    files: ['**/*.service.ts', '**/*.controller.ts'],
    ignores: NOT_TESTS,
    restrict: {
      paths: REDIS_CLIENTS.map((name) => ({
        name,
        message: 'Services and controllers never see Redis or BullMQ: go through a port (docs/design/architecture.md).',
      })),
      patterns: [
        {
          group: ['**/*.repository', '**/*.repository.js', '**/*.adapter', '**/*.adapter.js'],
          message:
            'Services and controllers depend on ports (*.port.ts), not on the repositories and adapters behind them.',
        },
      ],
    },
  },
  {
    // where-code-goes: the worker's Redis sits behind a port and a redis-* adapter, but for the places that
    // are Redis by nature: BullMQ's hosts and the take-over (jobs/), the heartbeat (presence/), and the one
    // command connection (worker-redis.ts).
    files: ['apps/worker/src/**/*.ts'],
    ignores: [
      ...NOT_TESTS,
      'apps/worker/src/**/redis-*.ts',
      'apps/worker/src/jobs/**',
      'apps/worker/src/presence/**',
      'apps/worker/src/worker-redis.ts',
      'apps/worker/src/worker.module.ts',
      'apps/worker/src/main.ts',
    ],
    restrict: {
      paths: ['ioredis', '@conveyor/redis'].map((name) => ({
        name,
        message: "The worker's Redis calls live in redis-* adapters behind ports (docs/design/where-code-goes.md).",
      })),
    },
  },
].map(({ files, ignores, restrict }) => ({
  files,
  ignores,
  rules: { '@typescript-eslint/no-restricted-imports': /** @type {['error', object]} */ (['error', restrict]) },
}));

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'models/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      // Type-aware rules read the same program as npm run typecheck: sources, tests, benches and scripts.
      parserOptions: { project: ['./tsconfig.check.json'], tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', '**/*.medium-spec.ts', 'test/**/*.ts'],
    languageOptions: { globals: { ...globals.jest } },
  },
  ...featureBoundaries,
  ...layerRules,
);
