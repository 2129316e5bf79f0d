import type { ResponseTool, ResponseToolChoice } from '@conveyor/openai';
import { isObject, LARK_KEYWORD, larkProblem } from '@conveyor/structured';
import { RequestProblem } from './request-problem.js';
import { FunctionDefinitionDto } from './tools.dto.js';
import { validateDto } from './validate-dto.js';

/**
 * The tools OpenAI runs on its own servers. A request may list them (clients such as Codex always
 * do); they are left out of the prompt, since nothing here can run them, and only forcing one with
 * `tool_choice` is refused.
 */
export const HOSTED_TOOL_TYPES: ReadonlySet<string> = new Set([
  'web_search',
  'web_search_preview',
  'web_search_2025_08_26',
  'web_search_preview_2025_03_11',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer_use_preview',
  'computer',
  'mcp',
  'local_shell',
  'shell',
  'apply_patch',
  'tool_search',
]);

/** Between a namespace's name and its function's in the name the model calls: `namespace__function`. */
export const NAMESPACE_SEPARATOR = '__';

/** The one argument a custom tool's call carries to the model, as JSON: its free-form input. */
export const CUSTOM_INPUT = 'input';

/** A tool the model is offered, under `modelName`, and how its calls are named back to the client. */
export interface OfferedTool {
  /** What the model calls it: the tool's name, or `namespace__name` inside a namespace. */
  modelName: string;
  kind: 'function' | 'custom';
  /** Where the request declares it (`tools[4].tools[0]`), for errors. */
  at: string;
  /** The name as the client declared it. */
  name: string;
  namespace?: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

type Flat = { tool: Record<string, unknown>; at: string; namespace?: string; namespaceDescription?: string };

const MAX_GRAMMAR = 65_536;

function functionProblem(tool: Record<string, unknown>, at: string): RequestProblem | null {
  const { type: _type, defer_loading: _defer, allowed_callers: _callers, output_schema: _out, ...definition } = tool;
  const result = validateDto(FunctionDefinitionDto, definition);
  if (result.ok) return null;
  const param = result.problem.param ? `${at}.${result.problem.param}` : at;
  return new RequestProblem(`${at}.${result.problem.message}`, param);
}

function customProblem(tool: Record<string, unknown>, at: string): RequestProblem | null {
  const fail = (message: string, field: string) => new RequestProblem(`${at}.${message}`, `${at}.${field}`);
  const probe = validateDto(FunctionDefinitionDto, { name: tool.name, description: tool.description });
  if (!probe.ok) return new RequestProblem(`${at}.${probe.problem.message}`, `${at}.${probe.problem.param ?? 'name'}`);
  const format = tool.format;
  if (format === undefined || format === null) return null;
  if (!isObject(format)) return fail('format must be an object', 'format');
  if (format.type === 'text') return null;
  if (format.type !== 'grammar') return fail('format.type must be "text" or "grammar"', 'format.type');
  if (format.syntax !== 'lark' && format.syntax !== 'regex')
    return fail('format.syntax must be "lark" or "regex"', 'format.syntax');
  if (typeof format.definition !== 'string' || !format.definition || format.definition.length > MAX_GRAMMAR)
    return fail(`format.definition must be a grammar of 1 to ${MAX_GRAMMAR} characters`, 'format.definition');
  return null;
}

/** The function and custom tools of `tools`, namespaces opened, each with where it is (for errors). */
function flatten(tools: readonly unknown[]): Flat[] {
  const flat: Flat[] = [];
  for (const [i, tool] of tools.entries()) {
    const at = `tools[${i}]`;
    if (!isObject(tool)) throw new RequestProblem(`${at} must be an object`, at);
    if (tool.type === 'function' || tool.type === 'custom') {
      flat.push({ tool, at });
      continue;
    }
    if (tool.type === 'namespace') {
      const probe = validateDto(FunctionDefinitionDto, { name: tool.name, description: tool.description });
      if (!probe.ok)
        throw new RequestProblem(`${at}.${probe.problem.message}`, `${at}.${probe.problem.param ?? 'name'}`);
      if (!Array.isArray(tool.tools) || tool.tools.length === 0)
        throw new RequestProblem(`${at}.tools must be a non-empty array of function or custom tools`, `${at}.tools`);
      for (const [j, inner] of (tool.tools as unknown[]).entries()) {
        const innerAt = `${at}.tools[${j}]`;
        if (!isObject(inner) || (inner.type !== 'function' && inner.type !== 'custom'))
          throw new RequestProblem(`${innerAt}.type must be "function" or "custom"`, `${innerAt}.type`);
        flat.push({
          tool: inner,
          at: innerAt,
          namespace: tool.name as string,
          namespaceDescription: typeof tool.description === 'string' ? tool.description : undefined,
        });
      }
      continue;
    }
    if (typeof tool.type === 'string' && HOSTED_TOOL_TYPES.has(tool.type)) continue;
    throw new RequestProblem(
      `${at}.type ${JSON.stringify(tool.type)} is not a tool type: expected "function", "custom", "namespace" or a hosted tool (${[...HOSTED_TOOL_TYPES].join(', ')})`,
      `${at}.type`,
    );
  }
  return flat;
}

function describeFormat(format: unknown): string {
  if (!isObject(format) || format.type !== 'grammar') return 'Its input is free-form text.';
  const kind = format.syntax === 'regex' ? 'this regular expression' : 'this Lark grammar';
  return `Its input is plain text (not JSON) that must match ${kind}:\n${String(format.definition)}`;
}

/**
 * A grammar format as a keyword of the input's schema, so that it reaches the engine's grammar with the
 * tool's parameters. A regular expression as the `pattern`, matched whole: held by the grammar where it
 * can be, else checked on the result like any schema's; one JavaScript cannot compile (a Rust-only
 * construct) stays in the description only, since a check no result could pass would fail every call. A
 * Lark grammar under LARK_KEYWORD, where the grammar can hold its constructs: every text it then writes
 * matches, so no check follows. Any other (recursive, templates, look-arounds) stays in the description only.
 */
function inputGrammar(format: unknown): Record<string, string> {
  if (!isObject(format) || format.type !== 'grammar') return {};
  const source = String(format.definition);
  if (format.syntax === 'lark') return larkProblem(source) === null ? { [LARK_KEYWORD]: source } : {};
  if (format.syntax !== 'regex') return {};
  const pattern = `^(?:${source.replace(/^\^/, '').replace(/(?<!\\)\$$/, '')})$`;
  try {
    new RegExp(pattern, 'u');
    return { pattern };
  } catch {
    return {};
  }
}

function offered({ tool, at, namespace, namespaceDescription }: Flat): OfferedTool {
  const name = tool.name as string;
  const modelName = namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
  const own = typeof tool.description === 'string' && tool.description ? tool.description : undefined;
  const context = namespaceDescription ? `(${namespace}: ${namespaceDescription})` : undefined;
  if (tool.type === 'custom') {
    const description = [own, context, describeFormat(tool.format)].filter(Boolean).join('\n\n');
    return {
      modelName,
      kind: 'custom',
      at,
      name,
      ...(namespace ? { namespace } : {}),
      description,
      parameters: {
        type: 'object',
        properties: { [CUSTOM_INPUT]: { type: 'string', ...inputGrammar(tool.format) } },
        required: [CUSTOM_INPUT],
        additionalProperties: false,
      },
    };
  }
  const description = [own, context].filter(Boolean).join('\n\n');
  return {
    modelName,
    kind: 'function',
    at,
    name,
    ...(namespace ? { namespace } : {}),
    ...(description ? { description } : {}),
    ...(isObject(tool.parameters) ? { parameters: tool.parameters } : {}),
  };
}

/**
 * The tools the model is offered, in order: functions as they are, a namespace's tools under
 * qualified names, a custom tool as a function of one string argument; hosted tools left out.
 * Refuses a malformed tool, naming the field (two tools the model would call by the same name are the
 * one tool check's to refuse).
 */
export function offeredTools(tools: readonly unknown[] | null | undefined): OfferedTool[] {
  return flatten(tools ?? []).map((entry) => {
    const problem =
      entry.tool.type === 'custom' ? customProblem(entry.tool, entry.at) : functionProblem(entry.tool, entry.at);
    if (problem) throw problem;
    return offered(entry);
  });
}

/** The offered tools by the name the model calls them; built from a response's echoed tools, never refusing. */
export function toolsByModelName(tools: readonly ResponseTool[] | null | undefined): Map<string, OfferedTool> {
  try {
    return new Map(offeredTools(tools).map((t) => [t.modelName, t]));
  } catch {
    return new Map();
  }
}

/** The name the model knows a declared tool by. */
export const modelNameOf = (name: string, namespace?: string | null): string =>
  namespace ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;

/** The offered tool a `tool_choice` object names, or a problem when it names none (or a hosted one). */
export function chosenTool(choice: Exclude<ResponseToolChoice, string>, offered: readonly OfferedTool[]): OfferedTool {
  const type = (choice as { type: string }).type;
  if (type !== 'function' && type !== 'custom') {
    throw new RequestProblem(
      `tool_choice forces the hosted tool "${type}", which this server cannot run.`,
      'tool_choice.type',
    );
  }
  const namespace = 'namespace' in choice ? choice.namespace : undefined;
  const matches = offered.filter(
    (t) =>
      t.kind === type &&
      (t.modelName === choice.name || (t.name === choice.name && (!namespace || t.namespace === namespace))),
  );
  if (matches.length !== 1) {
    throw new RequestProblem(
      `tool_choice names '${choice.name}', which is ${matches.length ? 'ambiguous among' : 'not one of'} the ${type} tools.`,
      'tool_choice.name',
    );
  }
  return matches[0]!;
}
