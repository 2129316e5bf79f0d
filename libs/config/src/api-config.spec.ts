import { describe, expect, it } from '@jest/globals';
import { hostname } from 'node:os';
import { hostName } from './host-name.js';
import { loadConfig } from './load-config.js';
import { configError } from '../../../test/support/config-error.js';

describe('loadConfig', () => {
  it('caps images at 10 MiB, 8K UHD and 8 per request unless told, and never beyond what the body limit carries', () => {
    expect(loadConfig({}).api.images).toEqual({ maxBytes: 10 * 1024 * 1024, maxPixels: 7680 * 4320, maxCount: 8 });
    expect(loadConfig({ IMAGE_MAX_BYTES: '1000', IMAGE_MAX_PIXELS: '4096', IMAGE_MAX_COUNT: '0' }).api.images).toEqual({
      maxBytes: 1000,
      maxPixels: 4096,
      maxCount: 0,
    });
    // Base64 takes 4/3: a body of 4 MiB carries 3 MiB of image at most, which becomes the default there.
    expect(loadConfig({ BODY_LIMIT_BYTES: String(4 * 1024 * 1024) }).api.images.maxBytes).toBe(3 * 1024 * 1024);
    expect(
      loadConfig({ BODY_LIMIT_BYTES: String(64 * 1024 * 1024), IMAGE_MAX_BYTES: String(20 * 1024 * 1024) }).api.images
        .maxBytes,
    ).toBe(20 * 1024 * 1024);
  });

  it('refuses image caps the body limit could never let through, or out of range, naming both settings', () => {
    const error = configError({ IMAGE_MAX_BYTES: String(20 * 1024 * 1024) });
    expect(error.problems).toHaveLength(1);
    expect(error.message).toContain('IMAGE_MAX_BYTES (20971520) cannot arrive within BODY_LIMIT_BYTES (16777216)');
    expect(error.message).toContain('raise BODY_LIMIT_BYTES above 27962027');
    expect(error.message).toContain('lower IMAGE_MAX_BYTES to 12582912');
    const ranges = configError({ IMAGE_MAX_PIXELS: '0', IMAGE_MAX_COUNT: '-1', IMAGE_MAX_BYTES: 'big' });
    expect(ranges.problems.map((p) => p.split(' ')[0])).toEqual([
      'IMAGE_MAX_BYTES',
      'IMAGE_MAX_PIXELS',
      'IMAGE_MAX_COUNT',
    ]);
  });

  it("answers to the loopback names and this machine's own name unless ALLOWED_HOSTS says otherwise", () => {
    const { allowedHosts, bodyTimeoutMs, uploadTimeoutMs } = loadConfig({}).api;
    const own = hostName(hostname());
    expect(allowedHosts).toEqual(expect.arrayContaining(['localhost', '127.0.0.1', '[::1]', ...(own ? [own] : [])]));
    expect(bodyTimeoutMs).toBe(30_000);
    expect(uploadTimeoutMs).toBe(600_000);
    expect(loadConfig({ ALLOWED_HOSTS: ' API.example.com:443, 10.0.0.5 ,::1,' }).api.allowedHosts).toEqual([
      'api.example.com',
      '10.0.0.5',
      '[::1]',
    ]);
    expect(loadConfig({ ALLOWED_HOSTS: '*' }).api.allowedHosts).toBe('*');
  });

  it('refuses an ALLOWED_HOSTS entry that is not a host name, with the other problems', () => {
    const error = configError({ ALLOWED_HOSTS: 'localhost,http://example.com', REQUEST_BODY_TIMEOUT_MS: '0' });
    expect(error.problems).toHaveLength(2);
    expect(error.message).toContain('ALLOWED_HOSTS');
    expect(error.message).toContain('"http://example.com"');
    expect(error.message).toContain('REQUEST_BODY_TIMEOUT_MS');
  });
});
