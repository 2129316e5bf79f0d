import type { DeploymentConfig } from '@conveyor/config';
import { findUnsupportedSchemaFeature } from '@conveyor/structured';
import type { ChatCompletionRequestDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

const given = <T>(v: T | null | undefined): v is T => v !== null && v !== undefined;

/** Refuses a JSON Schema with a keyword the grammar cannot enforce, naming it. */
export function assertSchemaSupported(schema: unknown, param: string): void {
  const problem = findUnsupportedSchemaFeature(schema);
  if (!problem) return;
  const at = problem.path ? `${param}.${problem.path}` : param;
  throw OpenAiHttpError.invalidRequest(`${problem.message} (at ${at}). Structured output cannot enforce "${problem.feature}".`, at, 'unsupported_schema_feature');
}

/** Checks that need the deployment: what it serves and how large its context is. Shared with legacy completions. */
export function assertGenerationFits(deployment: DeploymentConfig, maxTokens: number | undefined, n: number, param: { n: string }): void {
  if (deployment.task === 'embeddings') {
    throw OpenAiHttpError.invalidRequest(`The model '${deployment.id}' serves embeddings only (POST /v1/embeddings).`, 'model', 'model_not_supported');
  }
  if (maxTokens !== undefined && maxTokens >= deployment.contextSize) {
    throw OpenAiHttpError.invalidRequest(
      `max_tokens is ${maxTokens}, but the model's context is ${deployment.contextSize} tokens, prompt included.`,
      'max_tokens',
      'context_length_exceeded',
    );
  }
  if (n > deployment.parallel) {
    throw OpenAiHttpError.invalidRequest(`n is ${n}; this deployment generates at most ${deployment.parallel} choices at once.`, param.n, 'invalid_value');
  }
}

/**
 * Refuses well-formed requests this server cannot honour, naming the field,
 * rather than silently ignoring what the caller asked for.
 */
export function assertSupported(dto: ChatCompletionRequestDto, deployment: DeploymentConfig): void {
  const callIds = new Set<string>();
  for (const [i, m] of dto.messages.entries()) {
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) callIds.add(call.id);
    if (m.role === 'tool' && !callIds.has(m.tool_call_id as string)) {
      throw OpenAiHttpError.invalidRequest(`messages[${i}] answers tool call '${m.tool_call_id}', which no earlier assistant message made.`, `messages[${i}].tool_call_id`);
    }
    if (!Array.isArray(m.content)) continue;
    for (const [j, part] of m.content.entries()) {
      if (part.type !== 'image_url') continue;
      // Never fetched: a URL here would let any caller make this server reach into its network.
      if (!part.image_url.url.startsWith('data:')) {
        throw OpenAiHttpError.invalidRequest(
          'Only data: URIs are accepted for images (data:image/jpeg;base64,...); URLs are never fetched.',
          `messages[${i}].content[${j}].image_url.url`,
          'invalid_image_url',
        );
      }
      throw OpenAiHttpError.unsupported('Image input', `messages[${i}].content[${j}]`);
    }
  }
  const maxTokens = dto.max_completion_tokens ?? dto.max_tokens ?? deployment.defaults.max_tokens;
  assertGenerationFits(deployment, maxTokens ?? undefined, dto.n ?? 1, { n: 'n' });
  if (given(dto.min_tokens) && given(maxTokens) && dto.min_tokens > maxTokens) {
    throw OpenAiHttpError.invalidRequest(`min_tokens (${dto.min_tokens}) must not exceed max_tokens (${maxTokens}).`, 'min_tokens');
  }
  if (given(dto.top_logprobs) && dto.logprobs !== true) throw OpenAiHttpError.invalidRequest('top_logprobs requires logprobs to be true.', 'top_logprobs');
  assertToolsSupported(dto);
  const format = dto.response_format;
  if (format?.type === 'json_schema') {
    if (!format.json_schema) throw OpenAiHttpError.invalidRequest('response_format of type json_schema needs a json_schema object.', 'response_format.json_schema');
    if (given(format.json_schema.schema)) assertSchemaSupported(format.json_schema.schema, 'response_format.json_schema.schema');
  }
  if (format && format.type !== 'text' && dto.tools?.length && dto.tool_choice !== 'none') {
    throw OpenAiHttpError.invalidRequest('response_format cannot be combined with tools unless tool_choice is "none".', 'response_format', 'unsupported_parameter');
  }
}

function assertToolsSupported(dto: ChatCompletionRequestDto): void {
  const tools = dto.tools ?? [];
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (names.has(tool.function.name)) throw OpenAiHttpError.invalidRequest(`Tool name '${tool.function.name}' is used twice.`, `tools[${i}].function.name`);
    names.add(tool.function.name);
    if (given(tool.function.parameters)) assertSchemaSupported(tool.function.parameters, `tools[${i}].function.parameters`);
  }
  const choice = dto.tool_choice;
  if (!given(choice) || choice === 'none' || choice === 'auto') return;
  if (!tools.length) throw OpenAiHttpError.invalidRequest(`tool_choice ${JSON.stringify(choice)} needs tools.`, 'tool_choice');
  if (typeof choice === 'object' && !names.has(choice.function.name)) {
    throw OpenAiHttpError.invalidRequest(`tool_choice names '${choice.function.name}', which is not one of the tools.`, 'tool_choice.function.name');
  }
}
