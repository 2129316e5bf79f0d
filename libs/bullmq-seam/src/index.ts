export { SEAM_BULLMQ_VERSION, checkBullmqSeam, installedBullmqVersion } from './bullmq-version.js';
export { bullJobKeyPrefix, bullQueueKey, type BullQueuePart } from './queue-keys.js';
export { countByPriority, countSplitAtPriority, type BandCounts, type SplitCounts } from './queue-counts.js';
export { BullTakeOver, TAKE_OVER_SCRIPT, type TakenBack } from './take-over.script.js';
export { claimTokens, wakeFetchLoop } from './worker-internals.js';
