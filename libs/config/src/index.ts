export { loadConfig, deriveDeploymentId } from './load-config.js';
export { ConfigError } from './config-error.js';
export { EnvReader } from './env/env-reader.js';
export { llamaServerCache } from './worker-config.js';
export { hashKey } from './hash-key.js';
export { hostName } from './host-name.js';
export type * from './config.types.js';
export { SERVICE_TIERS, DEFAULT_KEY_TIERS } from './config.types.js';
export { enabledLogLevels } from './log-levels.js';
export { PLATFORM_CONFIG } from './tokens.js';
export { generatedFileCli, type GeneratedFrom } from './generated-file.js';
export { ModelNames } from './deployments/model-names.js';
export {
  API_KEY_NAME,
  API_KEY_NAME_TEXT,
  ApiKeySettingsDto,
  RateLimitDto,
  TokenLimitDto,
  WebhookDto,
} from './file/deployments-file.dto.js';
