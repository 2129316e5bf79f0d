import type { JsonSchema } from '@conveyor/structured';

/** What `z.toJSONSchema` (zod 4) writes for an object with `z.number().int()`, a bounded int and an email. */
export const zodSchema: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    count: { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
    rating: { type: 'integer', minimum: 1, maximum: 5 },
    price: { type: 'number', exclusiveMinimum: 0 },
    email: {
      type: 'string',
      format: 'email',
      pattern:
        "^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$",
    },
  },
  required: ['count', 'rating', 'price', 'email'],
  additionalProperties: false,
};
