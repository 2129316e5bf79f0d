import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';
import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { isObject } from '@conveyor/structured';
import { FUNCTION_NAME, NAME_MESSAGE } from './tools.dto.js';

/**
 * `"none" | "auto" | "required" | {type: "function" | "custom", name}`, or `{type}` forcing a hosted
 * tool: well-formed, though the generation check refuses it, since hosted tools do not run here.
 */
@ValidatorConstraint({ name: 'responseToolChoice' })
export class ResponseToolChoiceConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (value === 'none' || value === 'auto' || value === 'required') return true;
    if (!isObject(value) || typeof value.type !== 'string') return false;
    if (value.type !== 'function' && value.type !== 'custom') return true;
    const namespaceOk =
      value.namespace === undefined || value.namespace === null || typeof value.namespace === 'string';
    return typeof value.name === 'string' && FUNCTION_NAME.test(value.name) && namespaceOk;
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be "none", "auto", "required" or {"type": "function" | "custom", "name": "<tool name>"}`;
  }
}

export class ResponseTextFormatDto {
  @IsIn(['text', 'json_object', 'json_schema'], { message: 'type must be one of text, json_object, json_schema' })
  type: 'text' | 'json_object' | 'json_schema';

  /** json_schema: the schema's name. */
  @IsOptional()
  @IsString()
  @Matches(FUNCTION_NAME, { message: NAME_MESSAGE })
  name?: string | null;

  @IsOptional()
  @ApiProperty({
    required: false,
    nullable: true,
    description: 'json_schema: a JSON Schema (object or boolean)',
    oneOf: [{ type: 'object' }, { type: 'boolean' }],
  })
  schema?: Record<string, unknown> | boolean | null;

  @IsOptional()
  @IsString()
  description?: string | null;

  @IsOptional()
  @IsBoolean()
  strict?: boolean | null;
}

export class ResponseTextDto {
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ResponseTextFormatDto)
  format?: ResponseTextFormatDto | null;

  /** Accepted for compatibility; the reply's length is max_output_tokens'. */
  @IsOptional()
  @IsIn(['low', 'medium', 'high'], { message: 'verbosity must be low, medium or high' })
  verbosity?: string | null;
}

/** Accepted and echoed: whether a model thinks, and how much, is its deployment's (a reasoning parser). */
export class ResponseReasoningDto {
  @IsOptional()
  @IsIn(['none', 'minimal', 'low', 'medium', 'high'], { message: 'effort must be none, minimal, low, medium or high' })
  effort?: string | null;

  @IsOptional()
  @IsIn(['auto', 'concise', 'detailed'], { message: 'summary must be auto, concise or detailed' })
  summary?: string | null;
}
