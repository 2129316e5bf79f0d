import { ErrorCode } from '@conveyor/openai';
import { schemaBudgetProblem, UnsupportedSchemaError, type JsonSchema } from '@conveyor/structured';
import { RequestProblem } from './request-problem.js';

const CODES = {
  invalid: ErrorCode.invalidSchema,
  unsatisfiable: ErrorCode.invalidSchema,
  too_large: ErrorCode.schemaTooLarge,
  unsupported: ErrorCode.unsupportedSchemaFeature,
} as const;

/**
 * The one check of a JSON Schema a request carries (response formats, tool parameters, Messages'
 * `input_schema`): refuses a schema the JSON Schema specification does not accept, one no value can
 * satisfy, one past the size limits, naming the keyword by its path; and, given `budget` (the most
 * tokens the reply may have), one whose smallest conforming output cannot fit it. Its work is bounded
 * by the schema's size, whatever counts the schema asks for.
 */
export function checkSchema(schema: unknown, param: string, budget?: number): void {
  let least: number | null;
  try {
    least = schemaBudgetProblem(schema as JsonSchema, budget ?? Infinity);
  } catch (err) {
    if (!(err instanceof UnsupportedSchemaError)) throw err;
    const { problem } = err;
    const at = problem.path ? `${param}.${problem.path}` : param;
    throw new RequestProblem(`${problem.message} (at ${at}).`, at, CODES[problem.kind]);
  }
  if (least !== null) {
    throw new RequestProblem(
      budget === undefined
        ? `The smallest output ${param} allows is ${least} bytes long, more than any reply may be.`
        : `The reply may have ${budget} tokens, too few for the smallest output ${param} allows (${least} tokens); raise max_tokens.`,
      'max_tokens',
      ErrorCode.maxTokensTooSmall,
    );
  }
}
