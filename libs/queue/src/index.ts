export * from './chat-job.js';
export * from './stream-events.js';
export * from './keys.js';
export * from './batch.js';
export * from './reply-fence.js';
export * from './reply-result.js';
export * from './embed-job.js';
