import { IsBoolean, IsIn, IsObject, IsOptional, IsString, Matches, Validate } from 'class-validator';
import { MetadataConstraint } from '@conveyor/protocol';
import { BATCH_ENDPOINT_URLS, type BatchEndpointUrl } from '@conveyor/openai';

export class CreateBatchDto {
  @IsString()
  input_file_id: string;

  @IsIn(BATCH_ENDPOINT_URLS, { message: `endpoint must be one of: ${BATCH_ENDPOINT_URLS.join(', ')}` })
  endpoint: BatchEndpointUrl;

  /** OpenAI accepts "24h"; shorter windows ("90m", "30s") are accepted too, for tests and tight deadlines. */
  @Matches(/^[1-9]\d{0,5}[smh]$/, { message: 'completion_window must be a duration such as "24h"' })
  completion_window: string;

  @IsOptional()
  @Validate(MetadataConstraint)
  metadata?: Record<string, string> | null;

  /** `{ anchor: "created_at", seconds: N }`: the output and error files expire N seconds after the batch ends. */
  @IsOptional()
  @IsObject()
  output_expires_after?: { anchor: 'created_at'; seconds: number };

  /**
   * Conveyor's extension: false runs every line, even one that repeats an earlier greedy or seeded line
   * exactly (by default such a line is answered with the earlier one's result).
   */
  @IsOptional()
  @IsBoolean()
  fold_repeats?: boolean;
}

const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

export const windowSeconds = (window: string): number =>
  Number(window.slice(0, -1)) * UNIT_SECONDS[window.at(-1) as keyof typeof UNIT_SECONDS];
