import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Queue, Worker, type Job, type JobState } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { webhookQueueName } from '@conveyor/queue';
import { CommandConnection, bullConnection, releaseBullConnection, type BullConnection } from '@conveyor/redis';
import { bullMqTelemetry } from '@conveyor/telemetry';
import { WebhookOutbox, type WebhookDelivery, type WebhookDeliveryState } from './webhook-outbox.port.js';
import { WebhookSender } from './webhook-sender.js';

/** A delivered (or given up) event's job is kept this long, so queueing its event again adds nothing. */
const KEEP_ENDED_S = 7 * 24 * 3600;

/**
 * The webhook outbox on BullMQ: one job per event, its job id the event id, so an event queued twice
 * (by a replica that died after queueing it, and the one that took its batch over) is one job. Every
 * replica runs a worker on the queue; BullMQ retries a failed delivery with a doubling wait, and a job
 * whose replica died mid-delivery is taken up again by another once its lock lapses.
 */
@Injectable()
export class BullMqWebhookOutbox extends WebhookOutbox implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly queue: Queue<WebhookDelivery>;
  private worker: Worker<WebhookDelivery> | null = null;
  private connection: BullConnection | null = null;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    { redis }: CommandConnection,
    private readonly sender: WebhookSender,
  ) {
    super();
    // Adding jobs only: the API's one command connection, which BullMQ leaves open when it closes.
    this.queue = new Queue<WebhookDelivery>(webhookQueueName(), {
      connection: redis,
      prefix: config.redis.prefix,
      ...bullMqTelemetry(),
    });
    this.queue.on('error', (err) => this.logger.warn(`Webhook queue: ${err.message}`));
  }

  async enqueue(delivery: WebhookDelivery): Promise<void> {
    const { attempts, backoffMs } = this.config.batch.webhook;
    await this.queue.add('deliver', delivery, {
      jobId: delivery.event.id,
      attempts,
      backoff: { type: 'exponential', delay: backoffMs },
      removeOnComplete: { age: KEEP_ENDED_S },
      removeOnFail: { age: KEEP_ENDED_S },
    });
  }

  async state(eventId: string): Promise<WebhookDeliveryState | null> {
    const job = await this.queue.getJob(eventId);
    if (!job) return null;
    return deliveryState(await job.getState(), job);
  }

  onApplicationBootstrap(): void {
    const { timeoutMs } = this.config.batch.webhook;
    // A lock lapses a little after an attempt's own timeout: a replica that died mid-delivery holds its
    // event no longer than that before another replica sends it again (with the same webhook-id).
    const lockMs = timeoutMs + 5000;
    this.connection = bullConnection(this.config.redis, 'conveyor-api-webhooks', 'blocking', this.logger);
    this.worker = new Worker<WebhookDelivery>(webhookQueueName(), (job) => this.deliver(job), {
      connection: this.connection,
      prefix: this.config.redis.prefix,
      concurrency: 16,
      lockDuration: lockMs,
      stalledInterval: lockMs,
      // Sending again is what a receiver expects (it drops a repeated webhook-id): a stall never fails a job.
      maxStalledCount: 1000,
      ...bullMqTelemetry(),
    });
    this.worker.on('error', (err) => this.logger.warn(`Webhook worker: ${err.message}`));
    this.worker.on('failed', (job, err) => {
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
        this.logger.warn(
          `Webhook event ${job.id} for ${job.data.owner} given up after ${job.attemptsMade} attempts: ${err.message}`,
        );
      }
    });
  }

  private async deliver(job: Job<WebhookDelivery>): Promise<void> {
    await this.sender.send(job.data);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
    if (this.connection) releaseBullConnection(this.connection);
    await this.queue.close();
  }
}

/**
 * A delivery job's BullMQ state as the delivery's: done is delivered, failed for good is given up, a
 * job waiting after an attempt that failed (delayed, as BullMQ backs a retry off) is retrying.
 */
export function deliveryState(
  state: JobState | 'unknown',
  job: Pick<Job, 'attemptsMade' | 'failedReason' | 'finishedOn'>,
): WebhookDeliveryState {
  const attempts = job.attemptsMade;
  const lastError = job.failedReason || null;
  if (state === 'completed') return { status: 'delivered', attempts, lastError, finishedAt: job.finishedOn ?? null };
  if (state === 'failed') return { status: 'failed', attempts, lastError, finishedAt: job.finishedOn ?? null };
  return { status: attempts > 0 ? 'retrying' : 'pending', attempts, lastError, finishedAt: null };
}
