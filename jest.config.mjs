// ESM throughout: node-llama-cpp and Nest 12 are ESM-only, and jest on Node 20
// can only load them in its ESM mode (node --experimental-vm-modules).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
      target: 'es2022',
    },
    module: { type: 'es6' },
  },
];

const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@conveyor/(.*)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
};

// Three tiers, each its own project, run by scripts/test.mjs (npm test) as a jest run each, one after the
// other, with its own number of workers (npm run test:small, test:medium, test:e2e run one):
// - small:  *.spec.ts, pure: no Redis, no model, no processes, no network, no disk beyond reading source;
// - medium: *.medium-spec.ts, real Redis, the generated model loaded in process (or in a llama-server child), or scratch files;
// - e2e:    test/**/*.e2e-spec.ts, the built API and workers started as processes (npm run build first).
export default {
  // For a bare jest run (one file named on its command line, or several projects at once): one file at a
  // time, the safe choice for any tier. Jest takes maxWorkers for the whole run, never per project, so
  // scripts/test.mjs sets each tier's own on its run's command line.
  maxWorkers: 1,
  // End-to-end hooks start and stop processes; small and medium tests finish far inside this.
  // Jest reads the timeout from the top level only, so it is one for every project.
  testTimeout: 60_000,
  // A Redis for the run, and no process left behind by it: see test/support/owned-processes.mjs.
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  projects: [
    {
      ...shared,
      displayName: 'small',
      testMatch: ['<rootDir>/apps/**/*.spec.ts', '<rootDir>/libs/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
    },
    {
      ...shared,
      displayName: 'medium',
      setupFilesAfterEnv: ['<rootDir>/test/support/stop-owned-after-file.mjs'],
      testMatch: [
        '<rootDir>/apps/**/*.medium-spec.ts',
        '<rootDir>/libs/**/*.medium-spec.ts',
        '<rootDir>/test/**/*.medium-spec.ts',
      ],
    },
    {
      ...shared,
      displayName: 'e2e',
      setupFilesAfterEnv: ['<rootDir>/test/support/stop-owned-after-file.mjs'],
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
    },
  ],
};
