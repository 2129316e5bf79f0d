// Lint rules that catch what review misses: unawaited promises, non-exhaustive switches,
// loose equality, and feature folders of the API reaching into each other.
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
);
