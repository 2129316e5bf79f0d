import { randomBytes } from 'node:crypto';
import {
  LlamaText,
  type ChatWrapper,
  type Llama,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import type { OutputFormat, ToolChoice, ToolSpec } from '@conveyor/queue';
import { gbnfLiteral, jsonSchemaGrammar, minimumJsonBytes, type JsonSchema } from '@conveyor/structured';
import { EngineInputError } from '../core/generation-engine.js';
import type { ReplyShape, ToolCallPlan } from './reply-plan.js';

/** Arguments of a function that declares no parameters. */
const NO_PARAMETERS: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };
const GRAMMAR_CACHE_SIZE = 64;

/**
 * Builds the shape a reply must take (JSON held to a schema, a tool call in
 * the template's own syntax) and the grammars that hold it there. Grammars
 * are compiled once per distinct text: clients send the same schema again and again.
 */
export class ReplyShapes {
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly chatWrapper: ChatWrapper,
  ) {}

  /** The call syntax of the model's template: what opens a call, and what separates name and arguments. */
  private get syntax(): { prefix: LlamaText; paramsPrefix: LlamaText } {
    const call = this.chatWrapper.settings.functions.call;
    return { prefix: LlamaText(call.prefix), paramsPrefix: LlamaText(call.paramsPrefix) };
  }

  /** Tokens a forced call's prompt ends with, so the model's first token is already part of the call. */
  forcedCallOpening(tools: readonly ToolSpec[], choice: ToolChoice | undefined): Token[] {
    if (choice !== 'required' && typeof choice !== 'object') return [];
    const name = forcedName(tools, choice);
    const { prefix, paramsPrefix } = this.syntax;
    const opening = name ? LlamaText([prefix, name, paramsPrefix]) : prefix;
    return opening.tokenize(this.model.tokenizer);
  }

  async shape(
    request: { tools?: ToolSpec[]; toolChoice?: ToolChoice; responseFormat?: OutputFormat },
    budget: number,
  ): Promise<ReplyShape> {
    if (request.tools?.length)
      return { kind: 'tool', call: await this.toolCall(request.tools, request.toolChoice ?? 'auto', budget) };
    const format = request.responseFormat;
    if (!format) return { kind: 'text' };
    const schema = format.type === 'json_schema' ? (format.schema as JsonSchema) : null;
    const gbnf = jsonSchemaGrammar(schema, budget);
    if (!gbnf) {
      throw new EngineInputError(
        `The reply may have ${budget} tokens, too few for the smallest JSON response_format allows (${minimumJsonBytes(schema)} tokens); raise max_tokens.`,
        'max_tokens_too_small',
      );
    }
    return { kind: 'json', grammar: await this.grammar(gbnf.gbnf) };
  }

  private async toolCall(tools: readonly ToolSpec[], choice: ToolChoice, budget: number): Promise<ToolCallPlan> {
    const byName = new Map(tools.map((t) => [t.name, t]));
    const name = forcedName(tools, choice);
    const forced = choice === 'required' || typeof choice === 'object';
    const { prefix, paramsPrefix } = this.syntax;
    const argsSchema = (fn: string): JsonSchema =>
      (byName.get(fn)?.parameters as JsonSchema | undefined) ?? NO_PARAMETERS;
    if (forced && name && !jsonSchemaGrammar(argsSchema(name), budget)) {
      throw new EngineInputError(
        `The reply may have ${budget} tokens, too few for a call of "${name}" (at least ${minimumJsonBytes(argsSchema(name))}); raise max_tokens.`,
        'max_tokens_too_small',
      );
    }
    return {
      triggers: forced ? [] : [prefix.toString()],
      forcedName: name,
      nameGrammar: name
        ? undefined
        : await this.grammar(`root ::= ${tools.map((t) => gbnfLiteral(t.name)).join(' | ')}`),
      paramsPrefix: paramsPrefix.tokenize(this.model.tokenizer),
      argsGrammar: async (fn, left) => {
        const gbnf = jsonSchemaGrammar(argsSchema(fn), left);
        return gbnf ? this.grammar(gbnf.gbnf) : null;
      },
      callId: `call_${randomBytes(12).toString('hex')}`,
    };
  }

  private grammar(gbnf: string): Promise<LlamaGrammar> {
    let grammar = this.grammars.get(gbnf);
    if (!grammar) {
      grammar = this.llama.createGrammar({ grammar: gbnf });
      grammar.catch(() => this.grammars.delete(gbnf));
      if (this.grammars.size >= GRAMMAR_CACHE_SIZE) this.grammars.delete(this.grammars.keys().next().value as string);
      this.grammars.set(gbnf, grammar);
    }
    return grammar;
  }
}

/** The function a call must name: the named one, or the only tool when a call is required. */
function forcedName(tools: readonly ToolSpec[], choice: ToolChoice | undefined): string | undefined {
  if (typeof choice === 'object') return choice.name;
  return choice === 'required' && tools.length === 1 ? tools[0]!.name : undefined;
}
