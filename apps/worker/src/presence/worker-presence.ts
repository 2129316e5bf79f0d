import { Worker } from 'node:worker_threads';
import { Logger } from '@nestjs/common';
import type { RedisSettings } from '@conveyor/redis';
import type { HeartbeatSettings } from './heartbeat.js';
import type { HeartbeatCommand, HeartbeatMessage, HeartbeatReport, HeartbeatThreadData } from './heartbeat.thread.js';

/** How long a shutdown waits for the heartbeat thread to withdraw or leave, with Redis perhaps gone. */
const COMMAND_TIMEOUT_MS = 3000;

/**
 * Announces this worker as live for its deployments, and beats its heartbeat, every `heartbeatMs`
 * from a thread of its own (heartbeat.thread.ts), so a busy main thread does not stop the beats.
 * Both lapse after three missed beats: a killed worker drops out without saying goodbye, and its
 * jobs are taken over then.
 */
export class WorkerPresence {
  private readonly logger = new Logger(WorkerPresence.name);
  private thread: Worker | null = null;

  constructor(
    private readonly redis: RedisSettings,
    private readonly settings: HeartbeatSettings,
  ) {}

  /** Resolves once the first beat is in Redis. */
  async start(): Promise<void> {
    const data: HeartbeatThreadData = { redis: this.redis, heartbeat: { ...this.settings } };
    const thread = new Worker(new URL('./heartbeat.thread.js', import.meta.url), { workerData: data });
    this.thread = thread;
    await new Promise<void>((resolve, reject) => {
      thread.on('message', (report: HeartbeatReport) => {
        if (report.type === 'beating') resolve();
        if (report.type === 'warn') this.logger.warn(report.message);
      });
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`The heartbeat thread exited (${code}) before its first beat.`)));
    });
    thread.on('error', (err) => this.logger.error(`Heartbeat thread failed: ${err.message}`));
  }

  /** Withdraws the announcement at once, so readiness and routing stop counting this worker; the heartbeat goes on. */
  async withdraw(): Promise<void> {
    await this.command('withdraw');
  }

  /** Announces the worker for `deployments` from now on (see Heartbeat.serve); resolves once it is in Redis. */
  async serve(deployments: readonly string[]): Promise<void> {
    await this.command('serve', deployments);
  }

  /** Stops the heartbeat and removes it: call once no job is in hand, or a job still running could be taken over. */
  async stop(): Promise<void> {
    await this.command('leave');
    await this.thread?.terminate();
    this.thread = null;
  }

  private async command(command: HeartbeatCommand, deployments?: readonly string[]): Promise<void> {
    const thread = this.thread;
    if (!thread) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      const onReport = (report: HeartbeatReport) => {
        if (report.type !== 'done' || report.command !== command) return;
        thread.off('message', onReport);
        resolve();
      };
      thread.on('message', onReport);
      timer = setTimeout(resolve, COMMAND_TIMEOUT_MS);
      thread.postMessage({ command, deployments } satisfies HeartbeatMessage);
    });
    clearTimeout(timer);
  }
}
