import { IsIn, IsInt, IsNotEmpty, IsOptional, IsString, Max, Min, Validate } from 'class-validator';
import { EmbeddingInputConstraint } from './embedding-input.validator.js';

export { MAX_EMBEDDING_INPUTS } from './embedding-input.validator.js';

export const EMBEDDING_ENCODING_FORMATS = ['float', 'base64'] as const;

/**
 * The body of `POST /v1/embeddings`. `@IsOptional` skips both undefined and
 * null, so `"dimensions": null` (which some clients send) means "not set".
 * `dimensions` is typed here; whether the model can honour it is checked
 * against the deployment.
 */
export class EmbeddingRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  /** A string, strings, token ids or token-id arrays; the one array shape throughout. */
  @Validate(EmbeddingInputConstraint)
  input: string | string[] | number[] | number[][];

  @IsOptional()
  @IsIn(EMBEDDING_ENCODING_FORMATS, { message: 'encoding_format must be "float" or "base64"' })
  encoding_format?: (typeof EMBEDDING_ENCODING_FORMATS)[number] | null;

  @IsOptional() @IsInt() @Min(1) @Max(1 << 16)
  dimensions?: number | null;

  @IsOptional() @IsString()
  user?: string | null;
}

/** The request's inputs as a list, one entry per vector to return. */
export function embeddingInputs(dto: EmbeddingRequestDto): Array<string | number[]> {
  const { input } = dto;
  if (typeof input === 'string') return [input];
  // A flat list of numbers is one tokenized input; any other list holds one input per item.
  if (typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}
