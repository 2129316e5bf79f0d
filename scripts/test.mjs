// The test suite as one command (npm test): the three tiers of jest.config.mjs, each its own jest run, one
// after the other, so each gets its own number of workers. Jest takes maxWorkers for a whole run, never per
// project: in one run the end-to-end tier's one file at a time held the pure small tier to one file too.
//
//   node scripts/test.mjs [jest arguments]                      every tier
//   node scripts/test.mjs --selectProjects medium [arguments]   the tiers named
//
// Jest arguments go to every tier's run (a path pattern, --testNamePattern, --maxWorkers to override the
// tier's own). Every tier runs even when one fails; the exit code is 0 only when all passed. Each run has
// the config's global setup and teardown: a Redis for the run, and no process left behind by it.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parentDeathWrapper } from '../test/support/owned-processes.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cores = availableParallelism();

/**
 * Each tier's workers. Small files are pure CPU: one per core. Medium files each keep to their own Redis
 * prefix, ports and scratch folders, and load the tiny model with one thread, so they run beside each other;
 * they spend much of their time waiting on Redis, timers and leases, so two per core (on 2 cores: 22 s with
 * 4 workers, 31 s with 2, 26 s with 6; 90 s one at a time). End-to-end files each start an API and workers
 * (several processes) on a Redis prefix, ports and scratch folders of their own, and one that watches or
 * restarts Redis has a Redis of its own: one per core side by side (on 2 cores: 14 min with 3, beside other
 * work, where one at a time took 20), as more only slows each file's model and process starts.
 * @type {{ name: string, workers: number }[]}
 */
const TIERS = [
  { name: 'small', workers: cores },
  { name: 'medium', workers: 2 * cores },
  { name: 'e2e', workers: cores },
];

/**
 * The tiers named by --selectProjects (all when none), and the other arguments, for jest as they are.
 * @param {string[]} args
 */
function readArguments(args) {
  /** @type {string[]} */
  const selected = [];
  /** @type {string[]} */
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    const arg = /** @type {string} */ (args[i]);
    if (arg.startsWith('--selectProjects=')) selected.push(...arg.slice('--selectProjects='.length).split(','));
    else if (arg === '--selectProjects')
      while (i + 1 < args.length && !(/** @type {string} */ (args[i + 1]).startsWith('-'))) selected.push(args[++i]);
    else rest.push(arg);
  }
  const unknown = selected.filter((name) => !TIERS.some((t) => t.name === name));
  if (unknown.length) {
    console.error(`No tier ${unknown.join(', ')}: the tiers are ${TIERS.map((t) => t.name).join(', ')}.`);
    process.exit(2);
  }
  return { tiers: TIERS.filter((t) => !selected.length || selected.includes(t.name)), rest };
}

const { tiers, rest } = readArguments(process.argv.slice(2));
const has = (/** @type {string[]} */ ...flags) =>
  rest.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
// Arguments that narrow the run (a path pattern) may leave a tier nothing to run: that tier passes, and the
// run fails only when no tier ran a test.
const narrowed = rest.length > 0;
const results = mkdtempSync(join(tmpdir(), 'conveyor-test-results-'));

/** @type {import('node:child_process').ChildProcess | null} */
let running = null;
/** @type {NodeJS.Signals | null} */
let stoppedBy = null;
for (const signal of /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.on(signal, () => {
    stoppedBy = signal;
    // A Ctrl-C reaches jest too (the same process group); a signal sent to this script alone is passed on.
    running?.kill(signal);
  });
}

/**
 * Runs one tier; resolves with its exit code and, when jest wrote them, its counts.
 * @param {{ name: string, workers: number }} tier
 */
async function runTier(tier) {
  const outputFile = join(results, `${tier.name}.json`);
  const args = [
    '--experimental-vm-modules',
    join(root, 'node_modules/jest/bin/jest.js'),
    '--selectProjects',
    tier.name,
    ...(has('--maxWorkers', '-w') ? [] : [`--maxWorkers=${tier.workers}`]),
    ...(narrowed && !has('--passWithNoTests') ? ['--passWithNoTests'] : []),
    ...(has('--json', '--outputFile') ? [] : ['--json', `--outputFile=${outputFile}`]),
    ...rest,
  ];
  console.log(
    `\n── ${tier.name} tier: ${has('--maxWorkers', '-w') ? 'workers as asked' : `${tier.workers} worker(s)`}`,
  );
  const started = Date.now();
  // Dies with this script however it ends, as every process the tests start does (owned-processes.mjs).
  const [command, ...wrapped] = [...parentDeathWrapper(), process.execPath, ...args];
  running = spawn(/** @type {string} */ (command), wrapped, { cwd: root, stdio: 'inherit' });
  const code = await new Promise((resolve) =>
    /** @type {import('node:child_process').ChildProcess} */ (running).once('exit', (c, signal) =>
      resolve(c ?? (signal ? 128 : 1)),
    ),
  );
  running = null;
  return { name: tier.name, code, seconds: (Date.now() - started) / 1000, counts: readCounts(outputFile) };
}

/**
 * @param {string} file jest's --json output
 * @returns {{ files: number, filesFailed: number, tests: number, failed: number } | null}
 */
function readCounts(file) {
  try {
    const json =
      /** @type {{ numTotalTestSuites: number, numFailedTestSuites: number, numTotalTests: number, numFailedTests: number }} */ (
        JSON.parse(readFileSync(file, 'utf8'))
      );
    return {
      files: json.numTotalTestSuites,
      filesFailed: json.numFailedTestSuites,
      tests: json.numTotalTests,
      failed: json.numFailedTests,
    };
  } catch {
    return null;
  }
}

const done = [];
for (const tier of tiers) {
  if (stoppedBy) break;
  done.push(await runTier(tier));
}
rmSync(results, { recursive: true, force: true });

console.log('\n── tiers');
for (const { name, code, seconds, counts } of done) {
  // A file that failed to run (its setup threw) fails no test of its own: counted apart.
  const what = counts
    ? `${counts.files} files (${counts.filesFailed} failed), ${counts.tests} tests (${counts.failed} failed)`
    : 'no counts';
  console.log(`${code === 0 ? 'passed' : 'FAILED'}  ${name.padEnd(6)} ${what}, ${seconds.toFixed(1)} s`);
}
const ranNothing = narrowed && done.every((t) => t.counts !== null && t.counts.tests === 0);
if (ranNothing) console.log('No test matched the arguments in any tier.');
if (stoppedBy) {
  console.log(`Stopped by ${stoppedBy}; ${tiers.length - done.length} tier(s) not run.`);
  process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[/** @type {string} */ (stoppedBy)] ?? 0));
}
process.exit(done.every((t) => t.code === 0) && !ranNothing ? 0 : 1);
