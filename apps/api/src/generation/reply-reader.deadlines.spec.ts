import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ReplyDeadlines, type DeadlineOptions } from './reply-reader.js';

// Fake timers throughout: the deadlines are timers, and a test must never wait for one.
beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

describe('ReplyDeadlines', () => {
  const setup = (
    options: Partial<DeadlineOptions> = {},
    onQueueTimeout: () => Promise<Error | null> = async () => null,
  ) => {
    const failures: unknown[] = [];
    const source = { fail: (error: unknown) => void failures.push(error) };
    let queueTimeouts = 0;
    const deadlines = new ReplyDeadlines(source, {
      requestTimeoutMs: 10_000,
      queueTimeoutMs: 1_000,
      onQueueTimeout: () => {
        queueTimeouts++;
        return onQueueTimeout();
      },
      ...options,
    });
    return { deadlines, failures, queueTimeouts: () => queueTimeouts };
  };

  it('fails the source with a 504 timeout error at the request deadline', async () => {
    const { failures } = setup({ queueTimeoutMs: null });
    await jest.advanceTimersByTimeAsync(9_999);
    expect(failures).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(failures).toHaveLength(1);
    const error = failures[0] as OpenAiHttpError;
    expect(error).toBeInstanceOf(OpenAiHttpError);
    expect(error.status).toBe(504);
    expect(error.type).toBe('server_error');
    expect(error.code).toBe(ErrorCode.timeout);
    expect(error.message).toContain('10000 ms');
  });

  it('asks to hold the queue place of a job still untaken at its time, once, and of no job taken or ended before', async () => {
    let held = 0;
    const onStillQueued = () => void held++;
    setup({ onStillQueued, stillQueuedMs: 500 });
    await jest.advanceTimersByTimeAsync(499);
    expect(held).toBe(0);
    await jest.advanceTimersByTimeAsync(600);
    expect(held).toBe(1);
    setup({ onStillQueued, stillQueuedMs: 500 }).deadlines.markTaken();
    setup({ onStillQueued, stillQueuedMs: 500 }).deadlines.clear();
    setup({ onStillQueued, stillQueuedMs: 500, queueTimeoutMs: null });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(held).toBe(1);
  });

  it('asks to withdraw an untaken job at the queue deadline and fails the source with its error', async () => {
    const withdrawn = new Error('no worker took it');
    const { failures, queueTimeouts } = setup({}, async () => withdrawn);
    await jest.advanceTimersByTimeAsync(999);
    expect(queueTimeouts()).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(queueTimeouts()).toBe(1);
    expect(failures).toEqual([withdrawn]);
  });

  it('leaves the source alone when the queue deadline finds a worker took the job after all', async () => {
    const { failures, queueTimeouts } = setup({}, async () => null);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(queueTimeouts()).toBe(1);
    expect(failures).toEqual([]);
  });

  it('leaves the source alone when taking the job back fails', async () => {
    const { failures, queueTimeouts } = setup({}, () => Promise.reject(new Error('Redis is away')));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(queueTimeouts()).toBe(1);
    expect(failures).toEqual([]);
  });

  it('does not apply the queue deadline once a worker has taken the job', async () => {
    const { deadlines, failures, queueTimeouts } = setup({}, async () => new Error('withdrawn'));
    await jest.advanceTimersByTimeAsync(500);
    deadlines.markTaken();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(queueTimeouts()).toBe(0);
    expect(failures).toEqual([]);
  });

  it('has no queue deadline for a job already running (a resumed reply)', async () => {
    const { failures, queueTimeouts } = setup({ queueTimeoutMs: null }, async () => new Error('withdrawn'));
    await jest.advanceTimersByTimeAsync(9_999);
    expect(queueTimeouts()).toBe(0);
    expect(failures).toEqual([]);
  });

  it('stops both deadlines on clear', async () => {
    const { deadlines, failures, queueTimeouts } = setup({}, async () => new Error('withdrawn'));
    deadlines.clear();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(queueTimeouts()).toBe(0);
    expect(failures).toEqual([]);
  });

  describe("the request's own deadline", () => {
    const withDeadline = () => {
      const seen: Array<number | null> = [];
      const passed = new Error('deadline passed');
      const t = setup({
        queueTimeoutMs: 5_000,
        deadlineMs: 2_000,
        onDeadline: async (takenAt) => {
          seen.push(takenAt);
          return passed;
        },
      });
      return { ...t, seen, passed };
    };

    it('at the deadline, says no worker has the job yet, and fails the source with the error it is given', async () => {
      const { failures, seen, passed } = withDeadline();
      await jest.advanceTimersByTimeAsync(1_999);
      expect(seen).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(seen).toEqual([null]);
      expect(failures).toEqual([passed]);
    });

    it('says when a worker took the job, so a running reply is ended (and its job stopped)', async () => {
      const { deadlines, failures, seen, passed } = withDeadline();
      await jest.advanceTimersByTimeAsync(500);
      const takenAt = Date.now();
      deadlines.markTaken();
      await jest.advanceTimersByTimeAsync(1_500);
      expect(seen).toEqual([takenAt]);
      expect(failures).toEqual([passed]);
    });

    it('stops on clear, as the others do', async () => {
      const { deadlines, failures, seen } = withDeadline();
      deadlines.clear();
      await jest.advanceTimersByTimeAsync(60_000);
      expect(seen).toEqual([]);
      expect(failures).toEqual([]);
    });
  });
});
