import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { isObject } from '@conveyor/structured';
import { FUNCTION_NAME } from './tools.dto.js';

/** `"none" | "auto" | "required" | {type: "function", function: {name}}`. */
@ValidatorConstraint({ name: 'toolChoice' })
export class ToolChoiceConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (value === 'none' || value === 'auto' || value === 'required') return true;
    return (
      isObject(value) &&
      value.type === 'function' &&
      isObject(value.function) &&
      typeof value.function.name === 'string' &&
      FUNCTION_NAME.test(value.function.name)
    );
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be "none", "auto", "required" or {"type": "function", "function": {"name": "<tool name>"}}`;
  }
}

/** Token id (as a string key) → bias in [-100, 100], at most 300 entries, as OpenAI limits it. */
@ValidatorConstraint({ name: 'logitBias' })
export class LogitBiasConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (!isObject(value)) return false;
    const entries = Object.entries(value);
    return (
      entries.length <= 300 &&
      entries.every(([k, v]) => /^(0|[1-9]\d{0,8})$/.test(k) && typeof v === 'number' && v >= -100 && v <= 100)
    );
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must map token ids ("123") to numbers from -100 to 100, with at most 300 entries`;
  }
}
