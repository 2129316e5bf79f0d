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
import {
  gbnfLiteral,
  jsonSchemaGrammar,
  minimumJsonBytes,
  resultCheck,
  UnsupportedSchemaError,
  type JsonGrammar,
  type JsonSchema,
} from '@conveyor/structured';
import { EngineInputError } from '../core/generation-engine.js';
import type { NextCallPlan, ReplyShape, ToolCallPlan } from './reply-plan.js';

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

  /**
   * The call syntax of the model's template: what opens a reply's first call (the section of calls, then
   * the call), what separates name and arguments, what closes a call; and, where the template has several
   * calls in one reply, what opens each later one.
   */
  private get syntax(): { prefix: LlamaText; paramsPrefix: LlamaText; suffix: LlamaText; nextPrefix?: LlamaText } {
    const { call, parallelism } = this.chatWrapper.settings.functions;
    const between = parallelism?.call;
    return {
      prefix: LlamaText([between?.sectionPrefix ?? '', call.prefix]),
      paramsPrefix: LlamaText(call.paramsPrefix),
      suffix: LlamaText(call.suffix),
      nextPrefix: between ? LlamaText([between.betweenCalls ?? '', call.prefix]) : undefined,
    };
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
    request: {
      tools?: ToolSpec[];
      toolChoice?: ToolChoice;
      parallelToolCalls?: boolean;
      responseFormat?: OutputFormat;
    },
    budget: number,
  ): Promise<ReplyShape> {
    const format = request.responseFormat;
    if (request.tools?.length) {
      const choice = request.toolChoice ?? 'auto';
      // A named function is called once, as OpenAI does; otherwise as often as the model calls, unless told not to.
      const maxCalls = typeof choice === 'object' || request.parallelToolCalls === false ? 1 : Infinity;
      const call = await this.toolCall(request.tools, choice, maxCalls, budget);
      // A reply that may call or answer, with a response format: its text is the format's JSON or a call's
      // opening (a forced call has no text, and the format does not apply to it).
      if (format && call.triggers.length) call.textGrammar = await this.jsonOrCall(format, call.triggers, budget);
      return { kind: 'tool', call };
    }
    if (!format) return { kind: 'text' };
    const schema = format.type === 'json_schema' ? (format.schema as JsonSchema) : null;
    const gbnf = this.formatGrammar(schema, budget);
    const check = schema === null ? null : resultCheck(schema);
    return { kind: 'json', grammar: await this.grammar(gbnf), ...(check ? { check } : {}) };
  }

  /** The GBNF of a response format's JSON within `budget` tokens; a 400 when even its least output does not fit. */
  private formatGrammar(schema: JsonSchema | null, budget: number): string {
    const gbnf = schemaGrammar(schema, budget);
    if (!gbnf) {
      throw new EngineInputError(
        `The reply may have ${budget} tokens, too few for the smallest JSON response_format allows (${minimumJsonBytes(schema, budget)} tokens); raise max_tokens.`,
        'max_tokens_too_small',
      );
    }
    return gbnf.gbnf;
  }

  /** A grammar of a response format's JSON, or else of one of a call's openings (the reply then goes on as the call). */
  private jsonOrCall(format: OutputFormat, triggers: readonly string[], budget: number): Promise<LlamaGrammar> {
    const schema = format.type === 'json_schema' ? (format.schema as JsonSchema) : null;
    const json = this.formatGrammar(schema, budget);
    const [first, ...rules] = json.split('\n');
    const answer = first!.replace(/^root ::= /, '');
    const opening = triggers.map((t) => gbnfLiteral(t)).join(' | ');
    return this.grammar([`root ::= (${answer}) | ${opening}`, ...rules].join('\n'));
  }

  private async toolCall(
    tools: readonly ToolSpec[],
    choice: ToolChoice,
    maxCalls: number,
    budget: number,
  ): Promise<ToolCallPlan> {
    const byName = new Map(tools.map((t) => [t.name, t]));
    const name = forcedName(tools, choice);
    const forced = choice === 'required' || typeof choice === 'object';
    const { prefix, paramsPrefix, suffix, nextPrefix } = this.syntax;
    const argsSchema = (fn: string): JsonSchema =>
      (byName.get(fn)?.parameters as JsonSchema | undefined) ?? NO_PARAMETERS;
    if (forced && name && !schemaGrammar(argsSchema(name), budget)) {
      throw new EngineInputError(
        `The reply may have ${budget} tokens, too few for a call of "${name}" (at least ${minimumJsonBytes(argsSchema(name), budget)}); raise max_tokens.`,
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
        const gbnf = schemaGrammar(argsSchema(fn), left);
        return gbnf ? this.grammar(gbnf.gbnf) : null;
      },
      newCallId: () => `call_${randomBytes(12).toString('hex')}`,
      maxCalls,
      next: maxCalls > 1 && nextPrefix ? await this.nextCall(suffix, nextPrefix, name, tools, argsSchema) : undefined,
      ...argumentsCheck(tools),
    };
  }

  /**
   * How a call is followed by another. A further call needs at least: the token that chooses it, its
   * name (unless written for the model) and the token that ends the name, its smallest arguments, and
   * the token that ends them; counted in bytes, which no token is shorter than.
   */
  private async nextCall(
    suffix: LlamaText,
    opening: LlamaText,
    forced: string | undefined,
    tools: readonly ToolSpec[],
    argsSchema: (fn: string) => JsonSchema,
  ): Promise<NextCallPlan> {
    const names = forced ? [forced] : tools.map((t) => t.name);
    const nameBytes = forced ? 0 : Math.max(...names.map((n) => Buffer.byteLength(n))) + 1;
    const argsBytes = Math.max(...names.map((n) => minimumJsonBytes(argsSchema(n), budgetCap)));
    return {
      suffix: suffix.tokenize(this.model.tokenizer),
      opening: opening.tokenize(this.model.tokenizer),
      // Empty (the reply ends) or the opening's text: the model's first token of it is enough to go on.
      choice: await this.grammar(`root ::= (${gbnfLiteral(opening.toString())})?`),
      leastTokens: 1 + nameBytes + argsBytes + 1,
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

/** Far past any reply's budget: a schema's least output beyond it is not looked at closer. */
const budgetCap = 1 << 24;

/**
 * The schema's grammar for `budget` (null when none fits). A schema refused (invalid, unsatisfiable, too
 * large: a request that did not pass the API's check, as a batch line) is input no retry fixes.
 */
function schemaGrammar(schema: JsonSchema | null, budget: number): JsonGrammar | null {
  try {
    return jsonSchemaGrammar(schema, budget);
  } catch (err) {
    if (err instanceof UnsupportedSchemaError) throw new EngineInputError(err.message, 'invalid_schema');
    throw err;
  }
}

/**
 * The check a reply's calls need, where some tool's parameters have keywords the grammar cannot hold:
 * each call's arguments against its tool's schema, the first problem named with the call.
 */
function argumentsCheck(tools: readonly ToolSpec[]): Pick<ToolCallPlan, 'check'> {
  const checks = new Map<string, (text: string) => string | null>();
  for (const tool of tools) {
    const check = tool.parameters ? resultCheck(tool.parameters) : null;
    if (check) checks.set(tool.name, check);
  }
  if (!checks.size) return {};
  return {
    check: (calls) => {
      for (const [i, call] of calls.entries()) {
        const problem = checks.get(call.name)?.(call.arguments);
        if (problem) return `call ${i} (${call.name}): ${problem}`;
      }
      return null;
    },
  };
}

/** The function a call must name: the named one, or the only tool when a call is required. */
function forcedName(tools: readonly ToolSpec[], choice: ToolChoice | undefined): string | undefined {
  if (typeof choice === 'object') return choice.name;
  return choice === 'required' && tools.length === 1 ? tools[0]!.name : undefined;
}
