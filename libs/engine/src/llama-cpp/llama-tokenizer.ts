import type { LlamaModel, Token } from 'node-llama-cpp';
import { EngineInputError, type EngineTokenizer, type GenerationInput } from '../core/generation-engine.js';
import type { PromptRenderer } from './prompt-renderer.js';
import { rawPromptTokens } from './raw-prompt.js';

/** The in-process model's tokenizer, with the prompt renderer its generations use. */
export class LlamaTokenizer implements EngineTokenizer {
  private readonly vocabularySize: number;

  constructor(
    private readonly model: LlamaModel,
    private readonly renderer: PromptRenderer,
    readonly contextSize: number,
  ) {
    const tokens = (model.fileInfo.metadata as { tokenizer?: { ggml?: { tokens?: readonly unknown[] } } }).tokenizer
      ?.ggml?.tokens;
    this.vocabularySize = tokens?.length ?? 0;
  }

  async chat(request: Pick<GenerationInput, 'messages' | 'tools' | 'toolChoice'>): Promise<number[]> {
    // The prompt a generation counts: the template's tokens and any thought opening, not a forced call's opening.
    const rendered = this.renderer.chat(request);
    return rendered.tokens.slice(0, rendered.promptTokens);
  }

  async text(text: string, addSpecialTokens: boolean): Promise<number[]> {
    if (!addSpecialTokens) return this.model.tokenize(text, false);
    return rawPromptTokens(text, {
      bos: this.model.tokens.bos,
      prependBos: this.model.tokens.shouldPrependBosToken,
      tokenize: (t) => this.model.tokenize(t, false),
    });
  }

  async detokenize(tokens: readonly number[]): Promise<string> {
    // The native detokenizer reads past its table for an id outside it.
    const bad = tokens.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= this.vocabularySize);
    if (bad >= 0) {
      throw new EngineInputError(
        `tokens[${bad}] is ${tokens[bad]}, which is not a token of this model (its vocabulary has ${this.vocabularySize}).`,
        'invalid_value',
        `tokens[${bad}]`,
      );
    }
    return this.model.detokenize(tokens as Token[], true);
  }
}
