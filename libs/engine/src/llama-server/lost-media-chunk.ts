import { UpstreamError } from '../openai-upstream/upstream-error.js';

/**
 * Whether llama-server failed a request in its multimodal prompt cache, and how (the metric's reason).
 * llama.cpp (de3ff81) keeps a slot's cells up to the longest prefix they share with the new prompt; when
 * that prefix ends between two images that lay side by side in the cells (a prompt with the first of
 * them and then text, after one with both), `server_tokens::keep_first` takes the cut for one in the
 * middle of an image and throws "Chunk not found". Without the cache nothing is cut.
 */
export function lostMediaChunk(err: unknown): string | null {
  if (!(err instanceof UpstreamError) || err.status !== 500) return null;
  return /chunk not found/i.test(err.message) ? 'chunk_not_found' : null;
}
