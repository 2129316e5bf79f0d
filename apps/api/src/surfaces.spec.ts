import { describe, expect, it } from '@jest/globals';
import { openAiChat } from './chat/openai-chat.dialect.js';
import { openAiEmbeddings } from './embeddings/openai-embeddings.dialect.js';
import { anthropicMessages } from './messages/anthropic-messages.dialect.js';
import { batchEndpointsOf } from './contracts/batch-endpoint.js';
import { SURFACES } from './surfaces.js';

describe('batchEndpointsOf: the routes batches run, read from the surfaces that declare them', () => {
  const surfaces = [...SURFACES];

  it('finds each surface under the route it declares', () => {
    const endpoints = batchEndpointsOf(surfaces);
    expect(endpoints['/v1/chat/completions']).toBe(openAiChat);
    expect(endpoints['/v1/messages']).toBe(anthropicMessages);
    expect(Object.keys(endpoints).sort()).toEqual(surfaces.map((s) => s.route).sort());
  });

  it('refuses a route declared twice, and a batch route no surface declares', () => {
    expect(() => batchEndpointsOf([...surfaces, { ...openAiChat }])).toThrow(
      /Two surfaces declare the route \/v1\/chat\/completions/,
    );
    expect(() => batchEndpointsOf(surfaces.filter((s) => s !== openAiEmbeddings))).toThrow(/\/v1\/embeddings/);
  });
});
