import type { OutputFormat } from '@conveyor/queue';
import type { ChatCompletionRequestDto } from './chat-completion-request.dto.js';
import { given } from './sampling-fields.dto.js';
import type { DeclaredTools } from './tool-checks.js';

/** The chat body's fields that name its tools and the reply's format. */
type ToolFields = Pick<ChatCompletionRequestDto, 'tools' | 'tool_choice' | 'parallel_tool_calls' | 'response_format'>;

/** The chat body's tools in neutral terms: each function as the model calls it, the choice in the queue's terms. */
export function chatTools(request: ToolFields): DeclaredTools {
  const choice = given(request.tool_choice);
  return {
    tools: (request.tools ?? []).map((tool, i) => ({
      name: tool.function.name,
      description: tool.function.description,
      parameters: given(tool.function.parameters),
      nameAt: `tools[${i}].function.name`,
      parametersAt: `tools[${i}].function.parameters`,
    })),
    choice: typeof choice === 'object' ? { name: choice.function.name } : (choice ?? 'auto'),
    choiceAt: 'tool_choice.function.name',
    parallel: request.parallel_tool_calls !== false,
  };
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
