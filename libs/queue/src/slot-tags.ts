/**
 * Hash tags, so that what one script, MULTI or pipeline touches is in one slot of a Redis Cluster.
 * Redis Cluster places a key by the text between its first `{` and the next `}` when there is one,
 * so keys sharing a tag share a slot: a deployment's queues, admission and routing keys carry the
 * deployment's id, a batch's keys its id, an image's keys its hash. Keys used alone carry none.
 *
 * On a single Redis (or through Sentinel) a tag would change nothing but the keys' names, and a
 * platform upgraded in place must find its queues and batches where they were: so keys carry tags
 * only on a cluster, chosen once at start-up (`useHashTags`), before any key is named.
 */
let tagged = false;

/** On for a Redis Cluster: set once by each process at start-up, from its Redis configuration. */
export function useHashTags(on: boolean): void {
  tagged = on;
}

/** `id` as the hash tag of the keys it names on a cluster (`{id}`), and as itself elsewhere. */
export const slotTag = (id: string): string => (tagged ? `{${id}}` : id);
