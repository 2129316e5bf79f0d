// Runs in every medium and end-to-end test file: whatever the file started and did not stop (a timed-out
// beforeAll, a failed afterAll) is stopped when the file ends. See owned-processes.mjs.
import { afterAll } from '@jest/globals';
import { stopAllOwned } from './owned-processes.mjs';

afterAll(stopAllOwned, 30_000);
