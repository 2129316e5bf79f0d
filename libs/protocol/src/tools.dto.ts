import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';

/** OpenAI's rule for function and schema names. */
export const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const NAME_MESSAGE = 'name must be 1-64 letters, digits, underscores or dashes';

export class FunctionDefinitionDto {
  @IsString()
  @Matches(FUNCTION_NAME, { message: NAME_MESSAGE })
  name: string;

  @IsOptional()
  @IsString()
  @MaxLength(8192)
  description?: string | null;

  /** A JSON Schema; which keywords are supported is checked against the deployment, not here. */
  @IsOptional()
  @IsObject()
  parameters?: Record<string, unknown> | null;

  @IsOptional()
  @IsBoolean()
  strict?: boolean | null;
}

export class ToolDto {
  @IsIn(['function'], { message: 'type must be "function"' })
  type: 'function';

  @IsObject()
  @ValidateNested()
  @Type(() => FunctionDefinitionDto)
  function: FunctionDefinitionDto;
}

export class ToolCallFunctionDto {
  @IsString()
  @Matches(FUNCTION_NAME, { message: NAME_MESSAGE })
  name: string;

  /** JSON text, as the model produced it. */
  @IsString()
  arguments: string;
}

export class ToolCallDto {
  @IsString()
  @MaxLength(256)
  id: string;

  @IsIn(['function'], { message: 'type must be "function"' })
  type: 'function';

  @IsObject()
  @ValidateNested()
  @Type(() => ToolCallFunctionDto)
  function: ToolCallFunctionDto;
}

export class JsonSchemaFormatDto {
  @IsString()
  @Matches(FUNCTION_NAME, { message: NAME_MESSAGE })
  name: string;

  @IsOptional()
  @IsString()
  description?: string | null;

  /** An object or boolean JSON Schema; absent means any JSON object. */
  @IsOptional()
  @ApiProperty({
    required: false,
    nullable: true,
    description: 'A JSON Schema (object or boolean)',
    oneOf: [{ type: 'object' }, { type: 'boolean' }],
  })
  schema?: Record<string, unknown> | boolean | null;

  @IsOptional()
  @IsBoolean()
  strict?: boolean | null;
}

export class ResponseFormatDto {
  @IsIn(['text', 'json_object', 'json_schema'], { message: 'type must be one of text, json_object, json_schema' })
  type: 'text' | 'json_object' | 'json_schema';

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => JsonSchemaFormatDto)
  json_schema?: JsonSchemaFormatDto | null;
}
