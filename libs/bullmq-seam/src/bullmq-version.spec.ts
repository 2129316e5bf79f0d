import { describe, expect, it } from '@jest/globals';
import { Worker } from 'bullmq';
import { SEAM_BULLMQ_VERSION, checkBullmqSeam, installedBullmqVersion } from './bullmq-version.js';

describe('the BullMQ seam start-up check', () => {
  it('passes with the BullMQ installed, which is the version the seam was written for', () => {
    expect(installedBullmqVersion()).toBe(SEAM_BULLMQ_VERSION);
    expect(checkBullmqSeam()).toBeNull();
  });

  it('refuses another version in one line naming both', () => {
    const problem = checkBullmqSeam('6.8.0');
    expect(problem).toContain('BullMQ 6.8.0 is installed');
    expect(problem).toContain(`written for BullMQ ${SEAM_BULLMQ_VERSION}`);
    expect(problem).not.toContain('\n');
  });

  it('refuses a Worker whose fetch loop or lock tokens are not where the seam reaches for them', () => {
    // The same version number over a Worker that keeps its fetch loop elsewhere and draws tokens otherwise.
    class Renamed {
      fetchQueue: unknown = null;
      async mainLoop(): Promise<void> {
        this.fetchQueue = `${crypto.randomUUID()}:0`;
      }
    }
    const problem = checkBullmqSeam(SEAM_BULLMQ_VERSION, Renamed as unknown as typeof Worker);
    expect(problem).toContain('a fetch loop in mainLoopQueue');
    expect(problem).toContain('lock tokens made from the worker id');
    expect(problem).not.toContain('\n');
  });
});
