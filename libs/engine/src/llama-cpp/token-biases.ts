import { TokenBias, type LlamaModel, type Token } from 'node-llama-cpp';
import { EngineInputError } from '../core/generation-engine.js';
import { tokenBiasMap } from './native-context.js';

/**
 * A bias from raw token → logit offsets (-Infinity bans), end-of-generation tokens included (through the
 * seam: TokenBias.set() skips them).
 */
export function rawBias(model: LlamaModel, entries: Iterable<[Token, number]>): TokenBias {
  const bias = new TokenBias(model.tokenizer);
  const biases = tokenBiasMap(bias);
  for (const [token, logit] of entries) biases.set(token, logit);
  return bias;
}

export const vocabularySize = (model: LlamaModel): number =>
  (model.fileInfo.metadata.tokenizer?.ggml?.tokens as unknown[] | undefined)?.length ?? 0;

/** Every end-of-generation token of the model (EOS, EOT, <|im_end|>, …). */
export function endOfGenerationTokens(model: LlamaModel): Token[] {
  const tokens: Token[] = [];
  for (let token = 0; token < vocabularySize(model); token++)
    if (model.isEogToken(token as Token)) tokens.push(token as Token);
  return tokens;
}

/**
 * The biases of one request: `none` is empty; `free` applies OpenAI's logit_bias (±100 as logit offsets, as llama.cpp's
 * server applies them); `noEnd` also bans every token that would end the reply, while it may not end yet.
 */
export function requestBiases(
  model: LlamaModel,
  logitBias: Record<string, number> | undefined,
  ending: readonly Token[],
  needsNoEnd: boolean,
): { free: TokenBias; noEnd?: TokenBias; none: TokenBias } {
  const vocabulary = vocabularySize(model);
  const entries: Array<[Token, number]> = [];
  for (const [key, value] of Object.entries(logitBias ?? {})) {
    const token = Number(key);
    if (!(token < vocabulary))
      throw new EngineInputError(
        `logit_bias names token ${key}, but this model's vocabulary has ${vocabulary} tokens.`,
        'invalid_value',
      );
    entries.push([token as Token, value <= -100 ? -Infinity : value]);
  }
  return {
    free: rawBias(model, entries),
    none: rawBias(model, []),
    noEnd: needsNoEnd ? rawBias(model, [...entries, ...ending.map((t): [Token, number] => [t, -Infinity])]) : undefined,
  };
}
