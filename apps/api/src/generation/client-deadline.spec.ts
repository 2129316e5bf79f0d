import { describe, expect, it } from '@jest/globals';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { clientDeadlineMs } from './client-deadline.js';

describe('clientDeadlineMs', () => {
  it('reads our header in milliseconds, and none when no header names a deadline', () => {
    expect(clientDeadlineMs({ 'x-conveyor-deadline-ms': '2500' })).toBe(2500);
    expect(clientDeadlineMs({})).toBeNull();
  });

  it("takes 90% of an SDK's timeout (seconds), so our error reaches it before its own timeout fires", () => {
    expect(clientDeadlineMs({ 'x-stainless-timeout': '3' })).toBe(2700);
    expect(clientDeadlineMs({ 'x-stainless-timeout': '0.5' })).toBe(450);
  });

  it("sets a day at most from an SDK's timeout, however long: a longer timer would fire at once", () => {
    expect(clientDeadlineMs({ 'x-stainless-timeout': '2386093' })).toBe(86_400_000);
    expect(clientDeadlineMs({ 'x-stainless-timeout': '1e12' })).toBe(86_400_000);
  });

  it('keeps the shorter of the two', () => {
    expect(clientDeadlineMs({ 'x-conveyor-deadline-ms': '1000', 'x-stainless-timeout': '600' })).toBe(1000);
    expect(clientDeadlineMs({ 'x-conveyor-deadline-ms': '9000', 'x-stainless-timeout': '2' })).toBe(1800);
  });

  it('refuses a malformed header of ours with a 400 naming it, and ignores an unreadable SDK one', () => {
    for (const bad of ['soon', '-5', '0', '1.5', '', '86400001']) {
      let caught: unknown;
      try {
        clientDeadlineMs({ 'x-conveyor-deadline-ms': bad });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(OpenAiHttpError);
      expect((caught as OpenAiHttpError).status).toBe(400);
      expect((caught as OpenAiHttpError).param).toBe('x-conveyor-deadline-ms');
    }
    expect(clientDeadlineMs({ 'x-stainless-timeout': 'never' })).toBeNull();
  });
});
