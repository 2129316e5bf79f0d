import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';

/** OpenAI's limits on `metadata`: 16 pairs, keys of up to 64 characters, string values of up to 512. */
export const METADATA_LIMITS = { pairs: 16, keyChars: 64, valueChars: 512 } as const;

/**
 * A `metadata` object as OpenAI takes it. It is stored with what it describes (a response, a batch) and
 * read back whole with it, so one of 10,000 keys or a megabyte of value was kept and served each time.
 */
@ValidatorConstraint({ name: 'metadata' })
export class MetadataConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (value === null || value === undefined) return true;
    if (typeof value !== 'object' || Array.isArray(value)) return false;
    const entries = Object.entries(value as Record<string, unknown>);
    return (
      entries.length <= METADATA_LIMITS.pairs &&
      entries.every(
        ([key, v]) =>
          key.length <= METADATA_LIMITS.keyChars && typeof v === 'string' && v.length <= METADATA_LIMITS.valueChars,
      )
    );
  }

  defaultMessage(args: ValidationArguments): string {
    const { pairs, keyChars, valueChars } = METADATA_LIMITS;
    return `${args.property} must be an object of at most ${pairs} pairs, keys of up to ${keyChars} characters and string values of up to ${valueChars}`;
  }
}
