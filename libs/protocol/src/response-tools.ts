import type { OutputFormat } from '@conveyor/queue';
import { RequestProblem } from './request-problem.js';
import type { ResponseRequestDto } from './response-request.dto.js';
import { chosenTool, offeredTools } from './response-tool-list.js';
import { given } from './sampling-fields.dto.js';
import type { DeclaredTools } from './tool-checks.js';

/** The responses body's fields that name its tools and the reply's format. */
type ToolFields = Pick<ResponseRequestDto, 'tools' | 'tool_choice' | 'parallel_tool_calls' | 'text'>;

/**
 * The responses body's tools in neutral terms: the tools the model is offered (namespaces opened, custom
 * tools as functions, hosted ones left out; a malformed one refused), and the choice resolved to the name
 * the model calls (a forced hosted tool, or a name matching none or several, refused).
 */
export function responseTools(request: ToolFields): DeclaredTools {
  const choice = given(request.tool_choice);
  const offered = offeredTools(request.tools);
  return {
    tools: offered.map((t) => ({
      name: t.modelName,
      description: t.description,
      parameters: t.parameters,
      nameAt: `${t.at}.name`,
      parametersAt: `${t.at}.parameters`,
    })),
    choice: typeof choice === 'object' ? { name: chosenTool(choice, offered).modelName } : (choice ?? 'auto'),
    choiceAt: 'tool_choice.name',
    parallel: request.parallel_tool_calls !== false,
  };
}

/** Refuses a json_schema format without a name (its schema is the generation check's, as every API's). */
export function checkFormat(request: ToolFields): void {
  const format = given(request.text?.format);
  if (format?.type === 'json_schema' && !given(format.name))
    throw new RequestProblem('text.format of type json_schema needs a name.', 'text.format.name');
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
