import { ApiProperty } from '@nestjs/swagger';
import {
  IsNotEmpty,
  IsString,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { ErrorCode } from '@conveyor/openai';
import type { EmbedJobData } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import { isWellFormedText } from './message-content.validator.js';
import { MAX_RERANK_DOCUMENTS } from './rerank-request.dto.js';
import { RequestProblem } from './request-problem.js';

/** Why a `text_1` or `text_2` value is malformed: a non-empty string, or a list of 1 to 2048 of them. */
function describeTexts(value: unknown, field: string): string | null {
  const texts = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(texts)) return `${field} must be a string or an array of strings`;
  if (!texts.length) return `${field} must not be an empty array`;
  if (texts.length > MAX_RERANK_DOCUMENTS)
    return `${field} has ${texts.length} items; at most ${MAX_RERANK_DOCUMENTS} are allowed`;
  for (const [i, text] of (texts as unknown[]).entries()) {
    const at = typeof value === 'string' ? field : `${field} item ${i}`;
    if (typeof text !== 'string') return `${at} must be a string`;
    if (!text.length) return `${at} must not be an empty string`;
    if (!isWellFormedText(text)) return `${at} contains a lone UTF-16 surrogate, which is not valid text`;
  }
  return null;
}

@ValidatorConstraint({ name: 'scoreTexts' })
class ScoreTextsConstraint implements ValidatorConstraintInterface {
  validate(value: unknown, args: ValidationArguments): boolean {
    return describeTexts(value, args.property) === null;
  }
  defaultMessage(args: ValidationArguments): string {
    return describeTexts(args.value, args.property) ?? `${args.property} is malformed`;
  }
}

const TEXTS = {
  oneOf: [
    { type: 'string' },
    { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: MAX_RERANK_DOCUMENTS },
  ],
};

/**
 * The body of `POST /v1/score`, vLLM's score API for cross-encoders: `text_1` and `text_2` are paired and
 * each pair scored. One `text_1` goes with every `text_2` (as a rerank's query with its documents); lists
 * of the same length pair item by item.
 */
export class ScoreRequestDto {
  @IsString()
  @IsNotEmpty()
  model: string;

  @Validate(ScoreTextsConstraint)
  @ApiProperty(TEXTS)
  text_1: string | string[];

  @Validate(ScoreTextsConstraint)
  @ApiProperty(TEXTS)
  text_2: string | string[];

  /** The pairs, in order: each `text_2` with its `text_1`. */
  pairs(): { queries: string | string[]; documents: string[] } {
    const documents = typeof this.text_2 === 'string' ? [this.text_2] : this.text_2;
    const firsts = typeof this.text_1 === 'string' ? [this.text_1] : this.text_1;
    if (firsts.length === 1) return { queries: firsts[0]!, documents };
    if (firsts.length !== documents.length) {
      throw new RequestProblem(
        `text_1 has ${firsts.length} texts and text_2 ${documents.length}: give one text_1, or as many as text_2 to pair them item by item.`,
        'text_1',
      );
    }
    return { queries: firsts, documents };
  }

  /** Only a deployment with `task: rerank` scores pairs; each pair must fit its context on its own. */
  check(deployment: DeploymentTraits): void {
    if (deployment.task !== 'rerank') {
      throw new RequestProblem(
        `The model '${deployment.id}' does not score pairs.`,
        'model',
        ErrorCode.modelNotSupported,
      );
    }
    const { queries, documents } = this.pairs();
    const most = deployment.contextSize * deployment.promptCharsPerToken;
    for (const [i, document] of documents.entries()) {
      const length = (typeof queries === 'string' ? queries : queries[i]!).length + document.length;
      if (length <= most) continue;
      throw new RequestProblem(
        `Pair ${i} is ${length} characters; the model's context of ${deployment.contextSize} tokens holds at most ${most}.`,
        'text_2',
        ErrorCode.contextLengthExceeded,
      );
    }
  }

  toJob(requestId: string, deployment: DeploymentTraits, now = Date.now()): EmbedJobData {
    const { queries, documents } = this.pairs();
    return { requestId, deployment: deployment.id, inputs: [...documents], query: queries, enqueuedAt: now };
  }
}
