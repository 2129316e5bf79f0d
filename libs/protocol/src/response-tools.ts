import type { OutputFormat } from '@conveyor/queue';
import { jobTools, type JobTools } from './job-tools.js';
import { RequestProblem } from './request-problem.js';
import type { ResponseRequestDto } from './response-request.dto.js';
import { chosenTool, offeredTools } from './response-tool-list.js';
import { given } from './sampling-fields.dto.js';
import { checkSchema } from './schema-checks.js';

/** The responses body's fields that name its tools and the reply's format. */
type ToolFields = Pick<ResponseRequestDto, 'tools' | 'tool_choice' | 'parallel_tool_calls' | 'text'>;

/**
 * Refuses a malformed tool, a name the model would see twice, a parameters schema the grammar cannot
 * enforce, and a tool_choice naming no tool it is offered (a hosted tool among them).
 */
export function checkTools(request: ToolFields): void {
  const offered = offeredTools(request.tools);
  for (const tool of offered)
    if (tool.kind === 'function' && tool.parameters !== undefined)
      checkSchema(tool.parameters, `${tool.at}.parameters`);
  const choice = given(request.tool_choice);
  if (choice === undefined || choice === 'none' || choice === 'auto') return;
  if (typeof choice === 'object') chosenTool(choice, offered);
  else if (!offered.length)
    throw new RequestProblem(`tool_choice ${JSON.stringify(choice)} needs function or custom tools.`, 'tool_choice');
}

/** Refuses a json_schema format without a name or with a schema the grammar cannot enforce, and a format beside callable tools. */
export function checkFormat(request: ToolFields): void {
  const format = given(request.text?.format);
  if (!format || format.type === 'text') return;
  if (format.type === 'json_schema') {
    if (!given(format.name))
      throw new RequestProblem('text.format of type json_schema needs a name.', 'text.format.name');
    const schema = given(format.schema);
    if (schema !== undefined) checkSchema(schema, 'text.format.schema');
  }
}

/** The tools the job offers the model, and its choice among them; none when tool_choice is "none". */
export function responseJobTools(request: ToolFields): JobTools {
  const choice = given(request.tool_choice);
  const offered = offeredTools(request.tools);
  return jobTools(
    offered.map((t) => ({ name: t.modelName, description: t.description, parameters: t.parameters })),
    typeof choice === 'object' ? { name: chosenTool(choice, offered).modelName } : (choice ?? 'auto'),
    request.parallel_tool_calls !== false,
  );
}

/** The job's reply format from text.format: none for plain text. */
export function outputFormat(request: ToolFields): OutputFormat | undefined {
  const format = given(request.text?.format);
  if (format?.type === 'json_object') return { type: 'json_object' };
  if (format?.type !== 'json_schema') return undefined;
  const schema = given(format.schema);
  return schema === undefined
    ? { type: 'json_object' }
    : { type: 'json_schema', name: format.name ?? 'output', schema };
}
