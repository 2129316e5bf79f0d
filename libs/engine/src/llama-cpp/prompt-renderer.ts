import type { ChatModelFunctions, ChatWrapper, LlamaModel, Token } from 'node-llama-cpp';
import { withoutLarkKeyword } from '@conveyor/structured';
import type { GenerateRequest } from '../core/generation-engine.js';
import { promptOpensThought } from '../core/reasoning-splitter.js';
import { toChatHistory } from './llama-options.js';
import { rawPromptTokens } from './raw-prompt.js';
import type { ReplyShapes } from './reply-shapes.js';

/** A prompt to generate from, rendered and tokenized, with what ends a reply to it. */
export interface RenderedPrompt {
  tokens: Token[];
  /** Tokens of the prompt as the request gave it, before any continued reply text. */
  promptTokens: number;
  stops: string[];
  endTokens: Set<Token>;
  /** The prompt leaves the model inside a thought segment. */
  opensThought: boolean;
}

/** Renders a request's prompts as the model's own template does, and tokenizes them. */
export class PromptRenderer {
  constructor(
    private readonly model: LlamaModel,
    // Resolved once: auto-detecting per request costs hundreds of milliseconds.
    private readonly chatWrapper: ChatWrapper,
    private readonly shapes: ReplyShapes,
    /** Tokens the template opens each reply's thought with; node-llama-cpp's rendering leaves them out. */
    private readonly thoughtOpening: Token[],
  ) {}

  /**
   * A chat prompt in the model's own template, tokenized once, with what ends a turn in that template:
   * triggers that start with a special token end at that token, textual ones become stop strings.
   * With tools, the template describes them; a forced call's opening is written for the model.
   */
  chat(request: Pick<GenerateRequest, 'messages' | 'tools' | 'toolChoice'>, partial = ''): RenderedPrompt {
    const tools = request.tools ?? [];
    const functions: ChatModelFunctions | undefined = tools.length
      ? Object.fromEntries(
          tools.map((t) => [
            t.name,
            {
              description: t.description,
              params: withoutLarkKeyword(t.parameters) as ChatModelFunctions[string]['params'],
            },
          ]),
        )
      : undefined;
    const state = this.chatWrapper.generateContextState({
      chatHistory: toChatHistory(request.messages, partial),
      availableFunctions: functions,
      documentFunctionParams: true,
    });
    const stops: string[] = [];
    const endTokens = new Set<Token>();
    for (const trigger of state.stopGenerationTriggers) {
      const first = trigger.values[0];
      if (first === undefined) continue;
      if (typeof first === 'string' && trigger.values.every((v) => typeof v === 'string'))
        stops.push(trigger.values.join(''));
      else if (typeof first !== 'string') endTokens.add(trigger.tokenize(this.model.tokenizer)[0]!);
    }
    const tokens = state.contextText.tokenize(this.model.tokenizer);
    const promptTokens = partial ? this.chat({ ...request }).tokens.length : tokens.length;
    const thought = partial ? [] : this.thoughtOpening;
    const opening = [...thought, ...this.shapes.forcedCallOpening(tools, request.toolChoice)];
    const opensThought = thought.length > 0 || promptOpensThought(state.contextText.toString());
    return {
      tokens: [...tokens, ...opening],
      promptTokens: promptTokens + thought.length,
      stops: stops.filter(Boolean),
      endTokens,
      opensThought,
    };
  }

  /** A raw prompt (legacy completions): its text as it is, no template, special-token text kept as text. */
  text(text: string): RenderedPrompt {
    const tokens = rawPromptTokens(text, {
      bos: this.model.tokens.bos,
      prependBos: this.model.tokens.shouldPrependBosToken,
      tokenize: (t) => this.model.tokenize(t, false),
    });
    return { tokens, promptTokens: tokens.length, stops: [], endTokens: new Set(), opensThought: false };
  }
}
