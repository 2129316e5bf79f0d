import type { OutputFormat } from '@conveyor/queue';
import type { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import { jobTools, type JobTools } from './job-tools.js';
import { RequestProblem } from './request-problem.js';
import { given } from './sampling-fields.dto.js';
import { checkSchema } from './schema-checks.js';

/** The chat body's fields that name its tools and the reply's format. */
type ToolFields = Pick<ChatCompletionRequestDto, 'tools' | 'tool_choice' | 'parallel_tool_calls' | 'response_format'>;

/** Refuses a tool name used twice, a parameters schema the grammar cannot enforce, and a tool_choice naming no tool. */
export function checkTools(request: ToolFields, budget?: number): void {
  const tools = request.tools ?? [];
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (names.has(tool.function.name)) {
      throw new RequestProblem(`Tool name '${tool.function.name}' is used twice.`, `tools[${i}].function.name`);
    }
    names.add(tool.function.name);
    const parameters = given(tool.function.parameters);
    if (parameters !== undefined) checkSchema(parameters, `tools[${i}].function.parameters`, budget);
  }
  const choice = given(request.tool_choice);
  if (choice === undefined || choice === 'none' || choice === 'auto') return;
  if (!tools.length) throw new RequestProblem(`tool_choice ${JSON.stringify(choice)} needs tools.`, 'tool_choice');
  if (typeof choice === 'object' && !names.has(choice.function.name)) {
    throw new RequestProblem(
      `tool_choice names '${choice.function.name}', which is not one of the tools.`,
      'tool_choice.function.name',
    );
  }
}

/** The tools the job offers the model, and its choice among them; none when tool_choice is "none". */
export function chatJobTools(request: ToolFields): JobTools {
  const choice = given(request.tool_choice);
  return jobTools(
    request.tools?.map((t) => t.function),
    typeof choice === 'object' ? { name: choice.function.name } : (choice ?? 'auto'),
    request.parallel_tool_calls !== false,
  );
}

/** The job's reply format from response_format: none for plain text. */
export function outputFormat(request: ToolFields): OutputFormat | undefined {
  const format = given(request.response_format);
  if (format?.type === 'json_object') return { type: 'json_object' };
  if (format?.type === 'json_schema' && format.json_schema) {
    const schema = given(format.json_schema.schema);
    return schema === undefined
      ? { type: 'json_object' }
      : { type: 'json_schema', name: format.json_schema.name, schema };
  }
  return undefined;
}
