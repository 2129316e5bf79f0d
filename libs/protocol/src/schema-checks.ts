import { ErrorCode } from '@conveyor/openai';
import { findUnsupportedSchemaFeature } from '@conveyor/structured';
import { RequestProblem } from './request-problem.js';

/** Refuses a JSON Schema with a keyword the grammar cannot enforce, naming it by its path. */
export function checkSchema(schema: unknown, param: string): void {
  const problem = findUnsupportedSchemaFeature(schema);
  if (!problem) return;
  const at = problem.path ? `${param}.${problem.path}` : param;
  throw new RequestProblem(
    `${problem.message} (at ${at}). Structured output cannot enforce "${problem.feature}".`,
    at,
    ErrorCode.unsupportedSchemaFeature,
  );
}
