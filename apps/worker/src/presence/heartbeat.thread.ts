import { parentPort, workerData } from 'node:worker_threads';
import { useHashTags } from '@conveyor/queue';
import { createRedis, type RedisSettings } from '@conveyor/redis';
import { Heartbeat, type HeartbeatSettings } from './heartbeat.js';

/**
 * The heartbeat's own thread. A worker's main thread can be busy for seconds (a huge prompt tokenized,
 * a long garbage collection, a machine under load); beating from here keeps a slow worker from looking
 * dead, and its jobs from being taken over, for as long as the process lives. A thread cannot share
 * the main thread's connection, so the heartbeat has one of its own.
 */

/** What the main thread hands the heartbeat thread. */
export interface HeartbeatThreadData {
  redis: RedisSettings;
  heartbeat: HeartbeatSettings;
}

/** Main thread → heartbeat thread: `serve` comes with the deployments to beat for from now on. */
export type HeartbeatCommand = 'withdraw' | 'leave' | 'serve';
export interface HeartbeatMessage {
  command: HeartbeatCommand;
  deployments?: readonly string[];
}

/** Heartbeat thread → main thread: the first beat landed, a command is done, or a warning to log. */
export type HeartbeatReport =
  { type: 'beating' } | { type: 'done'; command: HeartbeatCommand } | { type: 'warn'; message: string };

const port = parentPort;
if (port) {
  const data = workerData as HeartbeatThreadData;
  // A thread has module state of its own: key names take the cluster's hash tags here too.
  useHashTags(data.redis.cluster !== null);
  const report = (message: HeartbeatReport) => port.postMessage(message);
  const warn = (message: string) => report({ type: 'warn', message });
  const redis = createRedis(data.redis, 'conveyor-worker-heartbeat', 'background', { warn });
  const heartbeat = new Heartbeat(redis, data.heartbeat);
  let beating = false;
  let failed = false;
  const beat = () =>
    heartbeat.beat().then(
      () => {
        failed = false;
        if (!beating) report({ type: 'beating' });
        beating = true;
      },
      (err: Error) => {
        // Once per outage: the connection reports its own errors, this says what they cost.
        if (!failed) warn(`Heartbeat failed: ${err.message}`);
        failed = true;
      },
    );
  void beat();
  const timer = setInterval(() => void beat(), data.heartbeat.heartbeatMs);
  port.on('message', ({ command, deployments }: HeartbeatMessage) => {
    const done = () => report({ type: 'done', command });
    if (command === 'serve')
      void heartbeat
        .serve(deployments ?? [])
        .catch((err: Error) => warn(`Heartbeat failed: ${err.message}`))
        .then(done);
    if (command === 'withdraw')
      void heartbeat
        .withdraw()
        .catch(() => undefined)
        .then(done);
    if (command === 'leave') {
      clearInterval(timer);
      void heartbeat
        .leave()
        .catch(() => undefined)
        .then(() => redis.disconnect())
        .then(done);
    }
  });
}
