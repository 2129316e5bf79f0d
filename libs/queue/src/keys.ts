/** Queue and Redis key naming, shared by API and workers so both sides agree. */
import { slotTag } from './slot-tags.js';

/**
 * The BullMQ queue of one deployment: every kind of job for it (generation, embeddings, batch lines).
 * On a cluster its name carries the deployment's tag (`jobs.{<deployment>}`): BullMQ's scripts touch
 * several keys of a queue, and the deployment's other keys (its places, its routes) share its slot.
 */
export const deploymentQueueName = (deployment: string): string => `jobs.${slotTag(deployment)}`;

/**
 * The places in a deployment's queue: a sorted set of the requests admitted to it and not yet taken by
 * a worker, each scored by when its place lapses (ms since the epoch). The API adds a request when it
 * admits it and gives the place back if its job is never queued or is taken back; the worker that takes
 * the job removes it, and a worker that takes a dead one's job back to waiting puts it back. A place
 * left by a process that died lapses on its own (`admittedUntil`).
 */
export const admissionKey = (prefix: string, deployment: string): string =>
  `${prefix}:admission:${slotTag(deployment)}`;

/**
 * The API keys that asked for a place in a deployment's queue lately, for weighted shares of its places:
 * a hash of key name → when it last asked and its weight (`<ms> <weight>`). In the deployment's slot.
 */
export const admissionAskingKey = (prefix: string, deployment: string): string =>
  `${admissionKey(prefix, deployment)}:asking`;

/**
 * The places one API key took in a deployment's queue: the request ids it was admitted with, each scored
 * by the latest its place could lapse. A worker gives a place back in `admissionKey` only, so a key's
 * places are those of its ids still in both sets (ZINTERCARD); the rest go as it takes new ones.
 */
export const admissionHeldKey = (prefix: string, deployment: string, keyName: string): string =>
  `${admissionHeldPrefix(prefix, deployment)}${keyName}`;

/** `admissionHeldKey` without the key's name, for the admission script to complete for every asking key. */
export const admissionHeldPrefix = (prefix: string, deployment: string): string =>
  `${admissionKey(prefix, deployment)}:held:`;

/** How long a key that asked for a place (admitted or not) counts as competing for the places. */
export const ADMISSION_ASKING_MS = 10_000;

/** How long a place is held for a request whose job has not reached a queue yet (its replica may die first). */
export const ADMISSION_RESERVATION_MS = 10_000;

/**
 * Until when a place is held for a job in a queue, from `now`: the API takes the job back once it has
 * waited `queueTimeoutMs`, so a place held longer was lost by a process that died.
 */
export const admittedUntil = (now: number, queueTimeoutMs: number): number =>
  now + queueTimeoutMs + ADMISSION_RESERVATION_MS;

/**
 * The reply inbox of one API replica: a stream every worker appends the events of that replica's
 * replies to, many replies' events in one entry (see reply-codec.ts), and the replica reads with one
 * blocking XREAD. The replica's id is its hash tag, so inboxes spread over a cluster's shards.
 */
export const replyInboxKey = (prefix: string, replica: string): string => `${prefix}:inbox:{${replica}}`;

/** A finished reply folded into one record, kept for REPLY_TTL_MS so a client can read it again (resume). */
export const replyRecordKey = (prefix: string, requestId: string): string => `${prefix}:replied:${requestId}`;

/** A stored response of the Responses API (a hash: owner, status, the response, its items), kept for RESPONSE_TTL_MS. */
export const responseKey = (prefix: string, responseId: string): string => `${prefix}:response:${responseId}`;

/**
 * Which API replica follows a background response (its holder's name), expiring unless renewed: once it
 * lapses, any replica that reads the response still queued or in progress may take it over.
 */
export const responseLeaseKey = (prefix: string, responseId: string): string =>
  `${prefix}:response-lease:${responseId}`;

/**
 * The cancels of the last CANCEL_TTL_MS: a sorted set of request ids scored by when each mark lapses,
 * added to as the cancel is published. A worker reads it whole once it has subscribed to the channel
 * (and again after a lost connection), so it knows every live cancel, and a job it starts later that a
 * client cancelled before is found without a command of its own.
 */
export const cancelsKey = (prefix: string): string => `${prefix}:cancels`;

/** Pub/sub channel on which the API tells workers to stop a running request. */
export const cancelChannel = (prefix: string): string => `${prefix}:cancel`;

export const CANCEL_TTL_MS = 10 * 60 * 1000;

/**
 * Live workers of a deployment: a sorted set of worker ids scored by the time
 * their announcement expires. A worker that dies simply stops renewing.
 */
export const liveWorkersKey = (prefix: string, deployment: string): string => `${prefix}:live:${slotTag(deployment)}`;

/**
 * The worker loading an on-demand deployment's model (its id, with a TTL its loader renews): one load
 * per fleet, not one per worker, and what `/v1/models` shows as `loading`. In the live set's slot.
 */
export const modelLoadingKey = (prefix: string, deployment: string): string =>
  `${prefix}:loading:${slotTag(deployment)}`;

/**
 * Heartbeats of the worker processes serving a deployment, for taking over a dead one's jobs: a sorted
 * set of process instances (`workerInstance`), each scored by when its beat lapses, in Redis's own clock.
 * Unlike `liveWorkersKey`, an entry stays until its process has finished its jobs (a graceful shutdown
 * removes it last) or another worker has taken them over (that worker removes it), so a lapsed entry
 * always means jobs may be left to take over.
 */
export const workerBeatsKey = (prefix: string, deployment: string): string => `${prefix}:beats:${slotTag(deployment)}`;

/**
 * When a deployment's heartbeats were last written, by any process, and since when they have been
 * written without a gap (a hash: `last`, `since`). In the heartbeats' slot. After an outage of their
 * Redis (a restart, a failover) every heartbeat looks lapsed; this tells a lapse from an outage.
 */
export const workerBeatsClockKey = (prefix: string, deployment: string): string =>
  `${workerBeatsKey(prefix, deployment)}:clock`;

/** The identity of the file store the API replicas on this prefix share. */
export const fileStoreKey = (prefix: string): string => `${prefix}:filestore`;

/**
 * The files that expire (uploads, batch output and error files given an expiry): a sorted set of file
 * ids scored by their `expires_at` in seconds, which every API replica's sweeper reads and removes from.
 */
export const fileExpiriesKey = (prefix: string): string => `${prefix}:file-expiries`;

/**
 * The BullMQ queue of webhook deliveries: one job per batch event, its job id the event's id. On a
 * cluster its name is its own tag, as BullMQ's scripts touch several keys of a queue.
 */
export const webhookQueueName = (): string => `webhooks.${slotTag('webhooks')}`;

/** Fixed-window request counter of one API key, shared by every API replica. */
export const rateLimitKey = (prefix: string, keyName: string, window: number): string =>
  `${prefix}:ratelimit:${keyName}:${window}`;

/** The windows of a key's token quota: a minute and a UTC day. */
export type TokenWindowWidth = 'minute' | 'day';

/**
 * Tokens a key reserved and used in one window of its token quota (a counter). A key's windows and
 * holds carry its name as their tag, so one script checks and reserves both windows and records the
 * hold in one slot on a cluster.
 */
export const tokenWindowKey = (prefix: string, keyName: string, width: TokenWindowWidth, window: number): string =>
  `${prefix}:tokens:${slotTag(keyName)}:${width}:${window}`;

/** The tokens reserved for one request of a key, until its reply ends and the real usage replaces them. */
export const tokenHoldKey = (prefix: string, keyName: string, requestId: string): string =>
  `${prefix}:tokens:${slotTag(keyName)}:held:${requestId}`;

/** The tokens a batch reserved against its owner's day and its lines not yet settled (a hash: tokens, lines). */
export const batchTokenHoldKey = (prefix: string, keyName: string, batchId: string): string =>
  `${prefix}:tokens:${slotTag(keyName)}:batch:${batchId}`;

/**
 * A worker's name in queue and key names: its id (`host:pid`) with every character BullMQ or a key
 * pattern could misread (`:` separates key parts) replaced.
 */
export const routeWorkerName = (workerId: string): string => workerId.replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * The queue of jobs routed to one worker of a deployment because it holds their prompt's beginning;
 * only that worker takes from it, and what it cannot take goes back to the deployment's queue.
 */
export const affinityQueueName = (deployment: string, worker: string): string =>
  `${deploymentQueueName(deployment)}@${worker}`;

/** The workers of a deployment that have (or had, until it is drained) an affinity queue: a set of names. */
export const routeQueuesKey = (prefix: string, deployment: string): string =>
  `${prefix}:route:${slotTag(deployment)}:queues`;

/** Free sequences of each worker of a deployment: a hash of worker name → count, kept by the workers. */
export const routeLoadKey = (prefix: string, deployment: string): string =>
  `${prefix}:route:${slotTag(deployment)}:load`;

/** The prompt block hashes one worker's sequences hold for a deployment: a set, expiring with the worker. */
export const routeBlocksKey = (prefix: string, deployment: string, worker: string): string =>
  `${routeBlocksPrefix(prefix, deployment)}${worker}`;

/** `routeBlocksKey` without the worker's name, for the routing script to complete. */
export const routeBlocksPrefix = (prefix: string, deployment: string): string =>
  `${prefix}:route:${slotTag(deployment)}:blocks:`;

/** The bytes of an image requests carried, stored once by their hash while jobs refer to them. */
export const imageKey = (prefix: string, sha256: string): string => `${prefix}:image:${slotTag(sha256)}`;

/** The jobs that refer to an image: a set of job ids; the image goes when the last of them is done. */
export const imageJobsKey = (prefix: string, sha256: string): string => `${prefix}:image:${slotTag(sha256)}:jobs`;

/** The widths of usage buckets, as OpenAI's Usage API names them. */
export type UsageBucketWidth = '1m' | '1h' | '1d';

/**
 * What every usage key of one UTC day begins with: the day is their tag, so one script counts a reply,
 * marks it counted and folds a day's new counts into its minute, hour and day buckets, in one slot on a
 * cluster. Scripts complete it with the names below.
 */
export const usageDayPrefix = (prefix: string, seconds: number): string =>
  `${prefix}:usage:${slotTag(`d${Math.floor(seconds / 86_400)}`)}:`;

/** Tokens and requests counted in one usage bucket (a hash), by key name, deployment, route and batch. */
export const usageBucketKey = (prefix: string, width: UsageBucketWidth, startSeconds: number): string =>
  `${usageDayPrefix(prefix, startSeconds)}${width}:${startSeconds}`;

/**
 * Counts of one minute not yet in its buckets (a string, a line a reply: one APPEND counts it): a reply
 * is counted here alone, and the day's new counts are added to their minute, hour and day buckets in one
 * pass, when the Usage API reads or a replica's periodic pass comes, whichever is first.
 */
export const usageNewKey = (prefix: string, minuteSeconds: number): string =>
  `${usageDayPrefix(prefix, minuteSeconds)}log:${minuteSeconds}`;

/** The minutes of one day with counts not yet in their buckets: a set of minute starts (seconds). */
export const usageNewMinutesKey = (prefix: string, daySeconds: number): string =>
  `${usageDayPrefix(prefix, daySeconds)}new`;

/** Set once a reply's usage is counted, so a reply read again (resumed, taken over) never counts twice. */
export const usageCountedKey = (prefix: string, atSeconds: number, requestId: string): string =>
  `${usageDayPrefix(prefix, atSeconds)}counted:${requestId}`;

/**
 * The API keys made at run time: a hash of key name to the hex SHA-256 of the key. A key's record and this
 * index share one tag, so a script that creates, rotates or revokes a key touches one slot on a cluster.
 */
export const apiKeyIndexKey = (prefix: string): string => `${prefix}:apikeys:${slotTag('apikeys')}`;

/**
 * Set when the first key is made at run time, and never unset: from then on authentication is on, even
 * once every key is revoked (revoking the last key must not open the API to anyone).
 */
export const apiKeysInUseKey = (prefix: string): string => `${prefix}:apikeys:${slotTag('apikeys')}:in-use`;

/**
 * The names of revoked run-time keys, never given again: files and batches belong to a key's name, and a
 * new key of a revoked key's name would own them.
 */
export const apiKeyRetiredNamesKey = (prefix: string): string => `${prefix}:apikeys:${slotTag('apikeys')}:retired`;

/**
 * One run-time API key, found by the hex SHA-256 of the key presented (the key itself is never stored):
 * a hash of its name, display hint, creation time and settings.
 */
export const apiKeyRecordKey = (prefix: string, sha256: string): string =>
  `${prefix}:apikeys:${slotTag('apikeys')}:${sha256}`;
