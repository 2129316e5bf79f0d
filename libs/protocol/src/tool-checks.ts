import type { ToolChoice } from '@conveyor/queue';
import { jobTools, type JobTools, type NamedTool } from './job-tools.js';
import { RequestProblem } from './request-problem.js';
import { checkSchema } from './schema-checks.js';

/** A tool as any API's body declares it, unwrapped to the name the model calls it, and where it stands in the body. */
export interface DeclaredTool extends NamedTool {
  /** The field that names it (`tools[0].function.name`, `tools[0].name`). */
  nameAt: string;
  /** The field that holds its parameters' schema (`tools[0].function.parameters`, `tools[0].input_schema`). */
  parametersAt: string;
}

/**
 * A request's tools in neutral terms, whichever API it speaks: the tools, the choice among them in the
 * queue's terms (`choiceAt`: the field naming a forced tool), and whether a reply may call several.
 */
export interface DeclaredTools {
  tools: DeclaredTool[];
  choice: ToolChoice;
  choiceAt: string;
  parallel: boolean;
}

/**
 * The one check of a request's tools: refuses a name the model would see twice, a parameters schema
 * the grammar cannot enforce (or, given `budget`, whose smallest call cannot fit it), a choice that
 * forces a call with no tools, and one naming no tool.
 */
export function checkTools({ tools, choice, choiceAt }: DeclaredTools, budget?: number): void {
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new RequestProblem(`Tool name '${tool.name}' is used twice.`, tool.nameAt);
    names.add(tool.name);
    if (tool.parameters) checkSchema(tool.parameters, tool.parametersAt, budget);
  }
  if (choice === 'none' || choice === 'auto') return;
  if (!tools.length) throw new RequestProblem('tool_choice forces a tool call, but no tools are given.', 'tool_choice');
  if (typeof choice === 'object' && !names.has(choice.name)) {
    throw new RequestProblem(`tool_choice names '${choice.name}', which is not one of the tools.`, choiceAt);
  }
}

/** The tools the job offers the model, and its choice among them; none when the choice is "none". */
export const toJobTools = ({ tools, choice, parallel }: DeclaredTools): JobTools => jobTools(tools, choice, parallel);
