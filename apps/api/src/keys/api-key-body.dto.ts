import { IsString, Matches } from 'class-validator';
import { API_KEY_NAME, API_KEY_NAME_TEXT, ApiKeySettingsDto } from '@conveyor/config';

/** A new key: its name and settings, checked as the deployments file's `apiKeys[]` are. */
export class CreateApiKeyDto extends ApiKeySettingsDto {
  @IsString()
  @Matches(API_KEY_NAME, { message: `name must be ${API_KEY_NAME_TEXT}` })
  name: string;
}

/** A key's settings to change: a field given is set, one given as null is removed (its default applies). */
export class UpdateApiKeyDto extends ApiKeySettingsDto {}
