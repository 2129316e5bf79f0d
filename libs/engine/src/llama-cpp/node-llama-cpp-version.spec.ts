import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { SEAM_NODE_LLAMA_CPP_VERSION, checkNodeLlamaCppSeam, installedNodeLlamaCppVersion } from './native-context.js';

describe('the node-llama-cpp seam start-up check', () => {
  it('passes with the node-llama-cpp installed, the version package.json pins exactly', () => {
    expect(installedNodeLlamaCppVersion()).toBe(SEAM_NODE_LLAMA_CPP_VERSION);
    expect(checkNodeLlamaCppSeam()).toBeNull();
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['node-llama-cpp']).toBe(SEAM_NODE_LLAMA_CPP_VERSION);
  });

  it('refuses another version in one line naming both', () => {
    const problem = checkNodeLlamaCppSeam('3.23.0');
    expect(problem).toContain('node-llama-cpp 3.23.0 is installed');
    expect(problem).toContain(`written for node-llama-cpp ${SEAM_NODE_LLAMA_CPP_VERSION}`);
    expect(problem).not.toContain('\n');
  });
});
