import { describe, expect, it } from '@jest/globals';
import { UpstreamError } from '../openai-upstream/upstream-error.js';
import { lostMediaChunk } from './lost-media-chunk.js';

describe('lostMediaChunk', () => {
  it("names llama-server's 500 for a cut between two cached images", () => {
    const err = new UpstreamError('llama-server answered 500: got exception: Chunk not found', 500);
    expect(lostMediaChunk(err)).toBe('chunk_not_found');
  });

  it('leaves every other failure to the queue', () => {
    expect(lostMediaChunk(new UpstreamError('llama-server answered 500: out of memory', 500))).toBeNull();
    expect(lostMediaChunk(new UpstreamError('llama-server answered 503: Chunk not found', 503))).toBeNull();
    expect(lostMediaChunk(new UpstreamError('llama-server failed: socket hang up'))).toBeNull();
    expect(lostMediaChunk(new Error('Chunk not found'))).toBeNull();
  });
});
