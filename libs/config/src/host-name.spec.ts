import { describe, expect, it } from '@jest/globals';
import { hostName } from './host-name.js';

describe('hostName', () => {
  it.each([
    ['localhost', 'localhost'],
    ['LocalHost:8000', 'localhost'],
    ['127.0.0.1:8000', '127.0.0.1'],
    ['[::1]:8000', '[::1]'],
    ['[::1]', '[::1]'],
    ['::1', '[::1]'],
    ['api.example.com.', 'api.example.com'],
    ['conveyor-api.conveyor.svc.cluster.local:80', 'conveyor-api.conveyor.svc.cluster.local'],
    ['my_api', 'my_api'],
  ])('reads %s as %s', (value, name) => {
    expect(hostName(value)).toBe(name);
  });

  it.each([
    '',
    'http://example.com',
    'example.com/path',
    'example.com:port',
    'exa mple.com',
    '[::1',
    '[::1]x',
    '[evil.com]',
    '.example.com',
    'a..b',
    '-a.com',
  ])('refuses %j', (value) => {
    expect(hostName(value)).toBeNull();
  });
});
