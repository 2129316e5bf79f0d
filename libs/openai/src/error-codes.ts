import type { OpenAiErrorType } from './error.types.js';

/**
 * Every `error.code` this platform answers with. Clients branch on these strings, so they
 * are named once here and used by the API, the worker and batch output files alike.
 */
export const ErrorCode = {
  // The request itself.
  invalidJson: 'invalid_json',
  invalidRequest: 'invalid_request',
  invalidValue: 'invalid_value',
  unsupportedParameter: 'unsupported_parameter',
  unsupportedSchemaFeature: 'unsupported_schema_feature',
  invalidSchema: 'invalid_schema',
  schemaTooLarge: 'schema_too_large',
  /** A structured output result that failed the schema check twice (the grammar held what it could). */
  schemaNotMet: 'schema_not_met',
  unsupportedMediaType: 'unsupported_media_type',
  invalidContentLength: 'invalid_content_length',
  requestTooLarge: 'request_too_large',
  invalidImageUrl: 'invalid_image_url',
  invalidImageFormat: 'invalid_image_format',
  invalidImage: 'invalid_image',
  imageTooLarge: 'image_too_large',
  tooManyImages: 'too_many_images',
  contextLengthExceeded: 'context_length_exceeded',
  maxTokensTooSmall: 'max_tokens_too_small',
  unknownUrl: 'unknown_url',
  dashboardDisabled: 'dashboard_disabled',
  /** An admin route (the Usage API) on an API started without an admin key. */
  adminDisabled: 'admin_disabled',
  // The HTTP request itself, refused before any route runs.
  malformedRequest: 'malformed_request',
  invalidUrl: 'invalid_url',
  urlTooLong: 'url_too_long',
  headersTooLarge: 'headers_too_large',
  requestTimeout: 'request_timeout',
  hostNotAllowed: 'host_not_allowed',
  // What it names.
  modelNotFound: 'model_not_found',
  modelNotSupported: 'model_not_supported',
  appNotFound: 'app_not_found',
  deploymentNotFound: 'deployment_not_found',
  poolNotFound: 'pool_not_found',
  completionNotFound: 'completion_not_found',
  invalidCompletionId: 'invalid_completion_id',
  responseNotFound: 'response_not_found',
  invalidResponseId: 'invalid_response_id',
  responseNotCancellable: 'response_not_cancellable',
  fileNotFound: 'file_not_found',
  invalidFileId: 'invalid_file_id',
  fileTooLarge: 'file_too_large',
  rangeNotSatisfiable: 'range_not_satisfiable',
  batchNotFound: 'batch_not_found',
  invalidBatchId: 'invalid_batch_id',
  batchNotCancellable: 'batch_not_cancellable',
  apiKeyNotFound: 'api_key_not_found',
  /** A run-time key's name is taken, by another run-time key or a configured one. */
  apiKeyExists: 'api_key_exists',
  /** A key from configuration (environment or deployments file), which the admin routes cannot change. */
  apiKeyReadOnly: 'api_key_read_only',
  // Credentials and limits.
  invalidApiKey: 'invalid_api_key',
  rateLimitExceeded: 'rate_limit_exceeded',
  tokenLimitExceeded: 'token_limit_exceeded',
  queueFull: 'queue_full',
  /** A `flex` request refused while its deployment's queue is deep: it would wait behind every other tier. */
  resourceUnavailable: 'resource_unavailable',
  // The platform.
  serviceUnavailable: 'service_unavailable',
  serverShuttingDown: 'server_shutting_down',
  timeout: 'timeout',
  /** The request's own deadline (a header, its key's or its deployment's) passed, queued or running. */
  deadlineExceeded: 'deadline_exceeded',
  generationFailed: 'generation_failed',
  embeddingFailed: 'embedding_failed',
  tokenizeFailed: 'tokenize_failed',
  replyRestarted: 'reply_restarted',
  // Batch validation and batch lines that did not run.
  invalidJsonLine: 'invalid_json_line',
  mismatchedUrl: 'mismatched_url',
  duplicateCustomId: 'duplicate_custom_id',
  tooManyLines: 'too_many_lines',
  tooManyErrors: 'too_many_errors',
  emptyFile: 'empty_file',
  batchCancelled: 'batch_cancelled',
  batchExpired: 'batch_expired',
  inputFileUnreadable: 'input_file_unreadable',
  lineLost: 'line_lost',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const TYPE_BY_STATUS: Readonly<Record<number, OpenAiErrorType>> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  503: 'service_unavailable',
};

/** The one mapping from an HTTP status to OpenAI's error `type`, wherever an error is answered or written. */
export const errorTypeFor = (status: number): OpenAiErrorType =>
  TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
