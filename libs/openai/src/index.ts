export type * from './chat.types.js';
export type * from './models.types.js';
export type * from './error.types.js';
export type * from './batch.types.js';
export { BATCH_ENDPOINT_URLS } from './batch.types.js';
export type * from './completions.types.js';
export type * from './embeddings.types.js';
export type * from './responses.types.js';
export { ErrorCode, errorTypeFor } from './error-codes.js';
