// Lint rules that catch what review misses: unawaited promises, non-exhaustive switches,
// loose equality, feature folders of the API reaching into each other, and the layers docs/design/ describes.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The API's folders, lowest first: a folder imports only folders below it, so imports run one way and
 * no two folders import each other (docs/design/architecture.md). The files at the top of apps/api/src
 * (the module, main, the OpenAPI command) stand above every folder. Shared types and ports that several
 * layers name live low, in contracts/.
 */
const API_LAYERS = [
  'repositories',
  'errors',
  'contracts',
  'deployments',
  'admin',
  'auth',
  'docs',
  'scaling',
  'webhooks',
  'platform',
  'metrics',
  'generation',
  'dialects',
  'http',
  'health',
  // The features: side by side, none imports another.
  'console',
  'files',
  'keys',
  'models',
  'fleet',
  'usage',
  'tokenize',
  'chat',
  'completions',
  'embeddings',
  'rerank',
  'score',
  'messages',
  'responses',
  'batches',
  'hosted-routes',
];

// A folder the layers do not place would be bound by nothing: every folder of the API must be listed.
const unplaced = readdirSync(new URL('apps/api/src/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && !API_LAYERS.includes(entry.name))
  .map((entry) => entry.name);
if (unplaced.length) throw new Error(`eslint.config.mjs: place apps/api/src/${unplaced.join(', ')} in API_LAYERS`);

/**
 * API feature folders: each may use the layers below it, never another feature. hosted-routes/ routes the
 * hosted forms' paths to the features' own handlers, so it may use them; no feature may use hosted-routes/.
 */
const API_FEATURES = [
  'console',
  'chat',
  'completions',
  'responses',
  'embeddings',
  'rerank',
  'score',
  'messages',
  'tokenize',
  'batches',
  'files',
  'models',
  'fleet',
  'usage',
  'keys',
];

/** A folder's imports of `others`, by a relative path from the folder or one below it. */
const importsOf = (/** @type {string[]} */ others, /** @type {(other: string) => string} */ message) =>
  others.map((other) => ({ group: [`../${other}/*`, `../../${other}/*`], message: message(other) }));

/** Test files: a test may build the whole app, so the top files are not closed to them. */
const NOT_TESTS = ['**/*.spec.ts', '**/*.medium-spec.ts', '**/*.e2e-spec.ts'];

/** The imports a folder's files may not make; `tests` leaves the top files open to them. */
function folderPatterns(/** @type {string} */ folder, /** @type {number} */ i, /** @type {boolean} */ tests) {
  const feature = API_FEATURES.includes(folder);
  return [
    ...importsOf(
      API_LAYERS.slice(i + 1).filter((other) => !feature || !API_FEATURES.includes(other)),
      (other) =>
        `${other}/ stands above ${folder}/ in the API's layers (API_LAYERS, eslint.config.mjs): imports run downwards only.`,
    ),
    ...(tests
      ? []
      : [
          {
            group: ['../*.js', '../../*.js'],
            message: 'The files at the top of apps/api/src import the folders, never the other way round.',
          },
        ]),
    ...(feature
      ? importsOf(
          API_FEATURES.filter((other) => other !== folder),
          (other) =>
            `Feature folders do not import each other: move what ${folder}/ needs from ${other}/ to a shared module.`,
        )
      : []),
  ];
}

/** @type {import('eslint').Linter.Config[]} */
const folderBoundaries = API_LAYERS.flatMap((folder, i) => [
  {
    files: [`apps/api/src/${folder}/**/*.ts`],
    ignores: NOT_TESTS,
    rules: { 'no-restricted-imports': ['error', { patterns: folderPatterns(folder, i, false) }] },
  },
  {
    files: NOT_TESTS.map((test) => `apps/api/src/${folder}/${test}`),
    rules: { 'no-restricted-imports': ['error', { patterns: folderPatterns(folder, i, true) }] },
  },
]);

/**
 * The structural sentences of docs/design/ as rules, so the pages cannot drift from the code. Each entry
 * is one sentence there; `@typescript-eslint/no-restricted-imports` carries them, beside the feature
 * folders' `no-restricted-imports`, so neither replaces the other.
 */
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
  {
    // The console's page runs in the browser, as plain JavaScript with no build step (see console/).
    files: ['apps/api/src/console/assets/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { ...globals.browser }, parserOptions: { project: null } },
  },
  ...folderBoundaries,
  ...layerRules,
);
