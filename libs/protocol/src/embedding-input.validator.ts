import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { isWellFormedText } from './message-content.validator.js';

/** OpenAI's limit on the inputs of one embeddings request. */
export const MAX_EMBEDDING_INPUTS = 2048;
/** Token ids are int32 in llama.cpp; the worker checks them against the model's vocabulary. */
const MAX_TOKEN_ID = 2 ** 31 - 1;

const SHAPES =
  'a non-empty string, an array of non-empty strings, an array of token ids, or an array of token-id arrays';

const isTokenId = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_TOKEN_ID;

function describeText(text: string, at: string): string | null {
  if (!text.length) return `${at} must not be an empty string`;
  return isWellFormedText(text) ? null : `${at} contains a lone UTF-16 surrogate, which is not valid text`;
}

function describeTokens(tokens: readonly unknown[], at: string): string | null {
  if (!tokens.length) return `${at} must not be an empty array of token ids`;
  const bad = tokens.findIndex((t) => !isTokenId(t));
  return bad < 0
    ? null
    : `${at} holds ${String(JSON.stringify(tokens[bad])).slice(0, 40)} at position ${bad}, which is not a token id (an integer from 0)`;
}

/** Why an item of a list `input` is malformed; `first` (item 0) decides which kind of list it is. */
function describeItem(first: unknown, item: unknown, at: string): string | null {
  if (typeof first === 'string')
    return typeof item === 'string' ? describeText(item, at) : `${at} must be a string, as item 0 is`;
  if (Array.isArray(first))
    return Array.isArray(item) ? describeTokens(item, at) : `${at} must be an array of token ids, as item 0 is`;
  return `input must be ${SHAPES}`;
}

/** Why an `input` value is malformed, or null when it is one of the four shapes OpenAI accepts. */
export function describeEmbeddingInputProblem(input: unknown): string | null {
  if (typeof input === 'string') return describeText(input, 'input');
  if (!Array.isArray(input)) return `input must be ${SHAPES}`;
  if (!input.length) return 'input must not be an empty array';
  if (input.length > MAX_EMBEDDING_INPUTS)
    return `input has ${input.length} items; at most ${MAX_EMBEDDING_INPUTS} are allowed`;
  const first: unknown = input[0];
  if (typeof first === 'number') return describeTokens(input, 'input');
  for (const [i, item] of input.entries()) {
    // Worded to start with "input": the reported param is the field, and the message names the item.
    const problem = describeItem(first, item, `input item ${i}`);
    if (problem) return problem;
  }
  return null;
}

@ValidatorConstraint({ name: 'embeddingInput' })
export class EmbeddingInputConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return describeEmbeddingInputProblem(value) === null;
  }

  defaultMessage(args: ValidationArguments): string {
    return describeEmbeddingInputProblem(args.value) ?? `input must be ${SHAPES}`;
  }
}
