import type { ClassConstructor } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { toDtoInstance } from './dto-instance.js';

/** A request field that failed validation, addressed the way OpenAI's `param` does (`messages[0].content`). */
export interface ValidationProblem {
  param: string | null;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; problem: ValidationProblem };

const joinPath = (parent: string, property: string): string =>
  /^\d+$/.test(property) ? `${parent}[${property}]` : parent ? `${parent}.${property}` : property;

function firstProblem(errors: readonly ValidationError[], parent = ''): ValidationProblem | null {
  for (const error of errors) {
    const param = joinPath(parent, error.property);
    const constraints = Object.entries(error.constraints ?? {});
    if (constraints.length) {
      // Decorators apply bottom-up, so the last entry is the topmost one: the type check. A value of
      // the wrong type must be told so, not that it exceeds a range.
      // class-validator lists its nested-object check last whatever the order, so it only speaks when alone.
      const own = constraints.filter(([name]) => name !== 'nestedValidation');
      const text = own.length ? own[own.length - 1][1] : `${error.property} must be an object`;
      // class-validator opens its messages with the bare property name; name the full path instead.
      const message = text.startsWith(`${error.property} `)
        ? `${param}${text.slice(error.property.length)}`
        : `${param}: ${text}`;
      return { param, message };
    }
    const nested = firstProblem(error.children ?? [], param);
    if (nested) return nested;
  }
  return null;
}

/** No request needs more; class-transformer recurses per level and would overflow the stack on thousands. */
export const MAX_NESTING = 32;

/** Whether a parsed JSON value nests deeper than `max`, checked without recursion. */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Validates an untrusted JSON value against a DTO class; reports the first problem with its path. */
export function validateDto<T extends object>(cls: ClassConstructor<T>, body: unknown): Validated<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, problem: { param: null, message: 'The request body must be a JSON object.' } };
  }
  if (nestsDeeperThan(body, MAX_NESTING)) {
    return {
      ok: false,
      problem: { param: null, message: `The request body nests deeper than ${MAX_NESTING} levels.` },
    };
  }
  const instance = toDtoInstance(cls, body as Record<string, unknown>);
  const errors = validateSync(instance, {
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
  });
  const problem = firstProblem(errors);
  return problem ? { ok: false, problem } : { ok: true, value: instance };
}
