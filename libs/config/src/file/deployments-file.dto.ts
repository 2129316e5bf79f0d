import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsHexadecimal,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export class SamplingDefaultsDto {
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number;
  @IsOptional() @IsInt() @Min(-1) top_k?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1) min_p?: number;
  @IsOptional() @IsNumber() @Min(0.01) @Max(10) repetition_penalty?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) presence_penalty?: number;
  @IsOptional() @IsNumber() @Min(-2) @Max(2) frequency_penalty?: number;
  @IsOptional() @IsInt() @Min(1) max_tokens?: number;
}

export class AppAliasDto {
  @IsString() @Matches(SEGMENT, { message: 'org must be 1-64 letters, digits, ".", "_" or "-"' }) org: string;
  @IsString() @Matches(SEGMENT, { message: 'app must be 1-64 letters, digits, ".", "_" or "-"' }) app: string;
}

export class DeploymentDto {
  @IsString() @Matches(/^[A-Za-z0-9][A-Za-z0-9._\/-]{0,127}$/, { message: "id must be 1-128 letters, digits, '.', '_', '-' or '/'" })
  id: string;

  @IsString() @IsNotEmpty() model: string;

  @IsOptional() @IsIn(['cpu', 'gpu']) pool?: 'cpu' | 'gpu';
  @IsOptional() @IsInt() @Min(64) contextSize?: number;
  @IsOptional() @IsInt() @Min(1) @Max(256) parallel?: number;
  @IsOptional() @IsInt() @Min(1) @Max(1024) threads?: number;
  @IsOptional() @IsIn(['auto', 'on', 'off']) flashAttention?: 'auto' | 'on' | 'off';

  @IsOptional() @ValidateNested() @Type(() => SamplingDefaultsDto) defaults?: SamplingDefaultsDto;
  @IsOptional() @ValidateNested() @Type(() => AppAliasDto) alias?: AppAliasDto;
  @IsOptional() @IsIn(['private', 'public']) auth?: 'private' | 'public';
  @IsOptional() @IsIn(['generate', 'embeddings']) task?: 'generate' | 'embeddings';
  @IsOptional() @IsIn(['think']) reasoningParser?: 'think';
}

export class RateLimitDto {
  @IsInt() @Min(1) requests: number;
  @IsInt() @Min(1) @Max(86_400) perSeconds: number;
}

export class ApiKeyDto {
  @IsString() @Matches(/^[A-Za-z0-9_.-]{1,64}$/, { message: "name must be 1-64 letters, digits, '.', '_' or '-'" }) name: string;
  @IsHexadecimal() @Length(64, 64, { message: 'sha256 must be the 64 hex digits of the key\'s SHA-256 (npm run hash-key -- <key>)' })
  sha256: string;
  @IsOptional() @ValidateNested() @Type(() => RateLimitDto) rateLimit?: RateLimitDto;
}

/** The deployments file (YAML or JSON) named by CONVEYOR_CONFIG. */
export class DeploymentsFileDto {
  @IsArray() @ArrayNotEmpty() @ValidateNested({ each: true }) @Type(() => DeploymentDto)
  deployments: DeploymentDto[];

  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => ApiKeyDto)
  apiKeys?: ApiKeyDto[];
}
