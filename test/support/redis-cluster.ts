import { ClusterNode, LoopbackCluster, servingPrimaries, until } from './loopback-cluster.mjs';

/**
 * A Redis Cluster of six nodes on loopback (see loopback-cluster.mjs), for tests that kill a primary and
 * watch its replica take over. A short node timeout keeps failovers to seconds.
 */
export class RedisCluster {
  private constructor(private readonly cluster: LoopbackCluster) {}

  static async start(options: { nodeTimeoutMs?: number } = {}): Promise<RedisCluster> {
    return new RedisCluster(await LoopbackCluster.start(options));
  }

  /** The seeds, as REDIS_CLUSTER_NODES takes them: every node (clients need only one that answers). */
  get seeds(): string {
    return this.cluster.seeds;
  }

  private get nodes(): ClusterNode[] {
    return this.cluster.nodes;
  }

  /** The primary serving `key`'s slot, as the running nodes see it. */
  async primaryOf(key: string): Promise<ClusterNode> {
    const running = this.nodes.find((n) => n.running)!;
    const slot = Number(await running.ask('CLUSTER', 'KEYSLOT', key));
    const owner = servingPrimaries(await this.cluster.view()).find((line) =>
      line.slots.some((range) => {
        const [from, to = from] = range.split('-').map(Number);
        return slot >= from! && slot <= to!;
      }),
    );
    const node = this.nodes.find((n) => n.address === owner?.address);
    if (!node) throw new Error(`no primary serves slot ${slot} of ${key}`);
    return node;
  }

  /** kill -9 of the primary serving `key`'s slot; resolves once it is dead. */
  async killPrimaryOf(key: string): Promise<ClusterNode> {
    const primary = await this.primaryOf(key);
    await primary.kill();
    return primary;
  }

  /** Until another node serves `key`'s slot as a primary: the replica has taken over. */
  async waitFailover(killed: ClusterNode, key: string, timeoutMs: number): Promise<ClusterNode> {
    let promoted: ClusterNode | null = null;
    await until(
      'a replica takes over',
      async () => {
        promoted = await this.primaryOf(key).catch(() => null);
        return promoted !== null && promoted !== killed;
      },
      timeoutMs,
    );
    return promoted!;
  }

  /**
   * Keeps what the primary serving `key`'s slot acknowledges from here on from its replicas: they are
   * disconnected and fail to authenticate when they reconnect, until `healReplication`.
   */
  async cutReplication(key: string): Promise<void> {
    const primary = await this.primaryOf(key);
    for (const node of this.nodes.filter((n) => n.running && n !== primary))
      await node.ask('CONFIG', 'SET', 'masterauth', 'not-the-password');
    await primary.ask('CLIENT', 'KILL', 'TYPE', 'replica');
  }

  /** Undoes `cutReplication` on every running node. */
  async healReplication(): Promise<void> {
    for (const node of this.nodes.filter((n) => n.running)) await node.ask('CONFIG', 'SET', 'masterauth', '');
  }

  /** Restarts a killed node: its node file makes it rejoin, as a replica of the primary that replaced it. */
  rejoin(node: ClusterNode): void {
    node.start();
  }

  /** Every node up, the cluster's state ok on each, three primaries each with a replica in sync. */
  waitHealthy(timeoutMs: number): Promise<void> {
    return this.cluster.waitHealthy(timeoutMs);
  }

  async stop(): Promise<void> {
    await this.cluster.stop();
  }
}
