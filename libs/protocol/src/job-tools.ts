import type { ToolChoice, ToolSpec } from '@conveyor/queue';

/** What a generation job carries of a request's tools. */
export interface JobTools {
  tools?: ToolSpec[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
}

/** A tool as each API's body names it once unwrapped; an empty description or schema is left out. */
export interface NamedTool {
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
}

/**
 * The job's tools, whichever API the request speaks: `choice` already in the queue's terms, `parallel`
 * false when the caller asked for one call at most. With "none" the model is not told about the tools at
 * all, so it cannot start a call.
 */
export function jobTools(
  tools: readonly NamedTool[] | null | undefined,
  choice: ToolChoice,
  parallel: boolean,
): JobTools {
  if (!tools?.length || choice === 'none') return {};
  return {
    tools: tools.map((t): ToolSpec => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
    })),
    toolChoice: choice,
    ...(parallel ? {} : { parallelToolCalls: false }),
  };
}
