import { isWellFormedText } from './message-content.validator.js';
import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';

export const MAX_STOP_SEQUENCES = 16;

@ValidatorConstraint({ name: 'stopSequences' })
export class StopSequencesConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    const list = typeof value === 'string' ? [value] : value;
    return (
      Array.isArray(list) &&
      list.length <= MAX_STOP_SEQUENCES &&
      list.every((s) => typeof s === 'string' && s.length > 0 && s.length <= 256 && isWellFormedText(s))
    );
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a non-empty string or an array of at most ${MAX_STOP_SEQUENCES} non-empty, well-formed strings of up to 256 characters`;
  }
}
