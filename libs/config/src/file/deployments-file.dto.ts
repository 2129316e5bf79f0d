import { Type } from 'class-transformer';
import { SamplingPresetDto } from '@conveyor/protocol';
import {
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsHexadecimal,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ENGINE_KINDS, type EngineKind } from '../engine-config.js';
import {
  DEPLOYMENT_TASKS,
  MODEL_LOADS,
  SERVICE_TIERS,
  type DeploymentTask,
  type ModelLoad,
  type ServiceTier,
} from '../config.types.js';
import { ALIAS_NAME, ALIAS_NAME_TEXT } from '../deployments/model-names.js';

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export class AppAliasDto {
  @IsString() @Matches(SEGMENT, { message: 'org must be 1-64 letters, digits, ".", "_" or "-"' }) org: string;
  @IsString() @Matches(SEGMENT, { message: 'app must be 1-64 letters, digits, ".", "_" or "-"' }) app: string;
}

/** An OpenAI-compatible server a deployment with `engine: openai` sends its requests to. */
export class UpstreamDto {
  @IsString() @IsNotEmpty() url: string;
  /** The key itself; prefer `apiKeyEnv`, which keeps it out of the file. */
  @IsOptional() @IsString() @IsNotEmpty() apiKey?: string;
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'apiKeyEnv must be the name of an environment variable' })
  apiKeyEnv?: string;
  @IsOptional() @IsString() @IsNotEmpty() model?: string;
}

/** The pace and text of a simulated engine (`engine: simulated`), which runs no model. */
export class SimulatedDto {
  @IsOptional() @IsInt() @Min(0) @Max(600_000) ttftMs?: number;
  @IsOptional() @IsInt() @Min(1) @Max(60_000) tpotMs?: number;
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) outputTokens?: number;
  @IsOptional() @IsString() @Matches(/\S/, { message: 'text must hold at least one word' }) text?: string;
}

/** A LoRA adapter of a deployment's model, served under a model name of its own. */
export class AdapterDto {
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/, {
    message: "name must be 1-128 letters, digits, '.', '_', '-' or '/'",
  })
  name: string;

  /** A `.gguf` adapter path, an `hf:` URI, or a generated adapter preset (`tiny-lora`). */
  @IsString() @IsNotEmpty() path: string;
  @IsOptional() @IsNumber() @Min(-10) @Max(10) scale?: number;
}

/**
 * A deployment served by an upstream may leave `model` out (`upstream.model` names it then), and so
 * may a simulated one, whose model is only a name.
 */
const modelOptional = (d: DeploymentDto): boolean =>
  d.engine === 'openai' || d.upstream !== undefined || d.engine === 'simulated' || d.simulated !== undefined;

export class DeploymentDto {
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/, {
    message: "id must be 1-128 letters, digits, '.', '_', '-' or '/'",
  })
  id: string;

  @ValidateIf((d: DeploymentDto) => !modelOptional(d) || d.model !== undefined)
  @IsString()
  @IsNotEmpty()
  model?: string;

  @IsOptional() @IsIn(['cpu', 'gpu']) pool?: 'cpu' | 'gpu';
  @IsOptional() @IsInt() @Min(64) contextSize?: number;
  @IsOptional() @IsInt() @Min(1) @Max(1024) promptCharsPerToken?: number;
  @IsOptional() @IsInt() @Min(1) @Max(256) parallel?: number;
  @IsOptional() @IsInt() @Min(1) @Max(1024) threads?: number;
  @IsOptional() @IsIn(['auto', 'on', 'off']) flashAttention?: 'auto' | 'on' | 'off';
  @IsOptional() @IsIn([true, false, 'exact', 'full', 'off']) promptCache?: boolean | 'exact' | 'full' | 'off';
  @IsOptional() @IsInt() @Min(0) @Max(1 << 24) promptCacheRam?: number;

  @IsOptional() @ValidateNested() @Type(() => SamplingPresetDto) defaults?: SamplingPresetDto;
  @IsOptional() @ValidateNested() @Type(() => AppAliasDto) alias?: AppAliasDto;
  @IsOptional() @IsIn(['private', 'public']) auth?: 'private' | 'public';
  @IsOptional() @IsIn(DEPLOYMENT_TASKS) task?: DeploymentTask;
  @IsOptional() @IsIn(['think']) reasoningParser?: 'think';

  @IsOptional() @IsIn(ENGINE_KINDS) engine?: EngineKind;
  /** A vision projector (a .gguf path or an hf: URI); implies `engine: llama-server`. */
  @IsOptional() @IsString() @IsNotEmpty() mmproj?: string;
  @IsOptional() @IsInt() @Min(1) @Max(65_536) imageMaxTokens?: number;
  @IsOptional() @IsBoolean() vision?: boolean;
  @IsOptional() @ValidateNested() @Type(() => UpstreamDto) upstream?: UpstreamDto;
  @IsOptional() @ValidateNested() @Type(() => SimulatedDto) simulated?: SimulatedDto;
  @IsOptional() @IsInt() @Min(1) @Max(86_400_000) deadlineMs?: number;
  @IsOptional() @IsIn(MODEL_LOADS) load?: ModelLoad;
  @IsOptional() @IsInt() @Min(0) @Max(1 << 24) memoryMb?: number;
  @IsOptional() @IsInt() @Min(0) @Max(10_000) minWarm?: number;
  @IsOptional() @IsArray() @ValidateNested({ each: true }) @Type(() => AdapterDto) adapters?: AdapterDto[];
}

export class RateLimitDto {
  @IsInt() @Min(1) requests: number;
  @IsInt() @Min(1) @Max(86_400) perSeconds: number;
}

export class TokenLimitDto {
  @IsOptional() @IsInt() @Min(1) perMinute?: number;
  @IsOptional() @IsInt() @Min(1) perDay?: number;
}

export class WebhookDto {
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] }) url: string;
  @IsString()
  @Matches(/^whsec_[A-Za-z0-9+/=]{16,}$/, { message: 'secret must be a Standard Webhooks secret: whsec_ and base64' })
  secret: string;
}

/** A key's name: the caller's name in usage, ownership and limits. */
export const API_KEY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
export const API_KEY_NAME_TEXT = "1-64 letters, digits, '.', '_' or '-'";

/**
 * A key's settings: the deployments file's `apiKeys[]` and the admin routes that make keys at run time
 * check them alike.
 */
export class ApiKeySettingsDto {
  @IsOptional() @ValidateNested() @Type(() => RateLimitDto) rateLimit?: RateLimitDto;
  @IsOptional() @ValidateNested() @Type(() => TokenLimitDto) tokenLimit?: TokenLimitDto;
  @IsOptional() @IsArray() @IsIn(SERVICE_TIERS, { each: true }) tiers?: ServiceTier[];
  @IsOptional() @IsNumber() @Min(0.01) @Max(1000) weight?: number;
  @IsOptional() @IsInt() @Min(1) @Max(86_400_000) deadlineMs?: number;
  @IsOptional() @ValidateNested() @Type(() => WebhookDto) webhook?: WebhookDto;
}

export class ApiKeyDto extends ApiKeySettingsDto {
  @IsString()
  @Matches(API_KEY_NAME, { message: `name must be ${API_KEY_NAME_TEXT}` })
  name: string;
  @IsHexadecimal()
  @Length(64, 64, { message: "sha256 must be the 64 hex digits of the key's SHA-256 (npm run hash-key -- <key>)" })
  sha256: string;
}

/** A model name clients send, exact or a pattern, and the deployment it reaches. */
export class ModelAliasDto {
  @IsString() @Matches(ALIAS_NAME, { message: `name must be ${ALIAS_NAME_TEXT}` }) name: string;
  @IsString() @IsNotEmpty() deployment: string;
}

/** The deployments file (YAML or JSON) named by CONVEYOR_CONFIG. */
export class DeploymentsFileDto {
  @IsArray()
  @ArrayNotEmpty()
  @ValidateNested({ each: true })
  @Type(() => DeploymentDto)
  deployments: DeploymentDto[];

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ApiKeyDto)
  apiKeys?: ApiKeyDto[];

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ModelAliasDto)
  modelAliases?: ModelAliasDto[];

  @IsOptional() @IsString() @IsNotEmpty() defaultDeployment?: string;
}
