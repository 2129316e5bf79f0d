import { Logger } from '@nestjs/common';
import type { ClassConstructor } from 'class-transformer';
import { RequestProblem, validateDto } from '@conveyor/protocol';

const logger = new Logger('RequestBody');
const knownFields = new WeakMap<ClassConstructor<object>, ReadonlySet<string>>();

/** A body class's fields: class fields are defined on construction (ES2022 semantics), so an empty instance lists them all. */
function fieldsOf(cls: ClassConstructor<object>): ReadonlySet<string> {
  let fields = knownFields.get(cls);
  if (!fields) knownFields.set(cls, (fields = new Set(Object.keys(new cls()))));
  return fields;
}

/**
 * Validates a request body against its class; a problem is thrown as a RequestProblem naming the
 * field. Unknown fields are ignored (clients add new ones all the time) and logged at debug.
 */
export function parseRequest<T extends object>(cls: ClassConstructor<T>, body: unknown): T {
  const result = validateDto(cls, body);
  if (!result.ok) throw new RequestProblem(result.problem.message, result.problem.param);
  const known = fieldsOf(cls);
  const unknown = Object.keys(body as object).filter((k) => !known.has(k));
  if (unknown.length) logger.debug(`Ignoring unknown request fields: ${unknown.join(', ')}`);
  return result.value;
}
