import { describe, expect, it } from '@jest/globals';
import { loadConfig, type DeploymentConfig } from '@conveyor/config';
import type { EmbedJobData, GenerationJobData, ImageRef } from '@conveyor/queue';
import { estimateTokens } from './token-estimate.js';

const base = loadConfig({}).deployments[0]!;
const deployment: DeploymentConfig = { ...base, contextSize: 1_000 };
const job = (fields: Partial<GenerationJobData>): GenerationJobData => ({
  requestId: 'r',
  deployment: 'd',
  messages: [{ role: 'user', content: 'Sixteen bytes!!!' }],
  sampling: { temperature: 0 },
  stop: [],
  enqueuedAt: 0,
  ...fields,
});
const image: ImageRef = { sha256: 'a'.repeat(64), mime: 'image/png', bytes: 10, width: 280, height: 56 };

describe('estimateTokens', () => {
  it("counts a prompt's UTF-8 bytes a quarter token each, a few tokens a turn, and max_tokens for every choice", () => {
    expect(estimateTokens(job({ maxTokens: 10 }), deployment)).toBe(4 + 4 + 10);
    expect(estimateTokens(job({ maxTokens: 10, n: 3 }), deployment)).toBe(4 + 4 + 30);
    // Four bytes a character: one token each.
    expect(estimateTokens(job({ messages: [{ role: 'user', content: '😀😀' }], maxTokens: 1 }), deployment)).toBe(
      2 + 4 + 1,
    );
  });

  it('reserves the context the prompt leaves when the request sets no max_tokens', () => {
    expect(estimateTokens(job({}), deployment)).toBe(1_000);
  });

  it("counts an image its deployment's budget, or a token a 28×28 square", () => {
    const messages: GenerationJobData['messages'] = [{ role: 'user', content: '', parts: [{ type: 'image', image }] }];
    expect(estimateTokens(job({ messages, maxTokens: 0 }), deployment)).toBe(4 + 20);
    const budgeted: DeploymentConfig = {
      ...deployment,
      engine: { kind: 'llama-server', mmproj: null, imageMaxTokens: 256 },
    };
    expect(estimateTokens(job({ messages, maxTokens: 0 }), budgeted)).toBe(4 + 256);
  });

  it('counts each legacy prompt with its own reply budget, and embeddings their inputs only', () => {
    expect(estimateTokens(job({ messages: [], prompts: ['abcd', 'abcdefgh'], maxTokens: 5 }), deployment)).toBe(
      1 + 5 + 2 + 5,
    );
    const embed: EmbedJobData = { requestId: 'r', deployment: 'd', inputs: ['abcdefgh', [1, 2, 3]], enqueuedAt: 0 };
    expect(estimateTokens(embed, deployment)).toBe(2 + 3);
  });
});
