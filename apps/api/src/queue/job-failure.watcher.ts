import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { QueueEvents } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { batchInflightKey, batchResultsKey, chatQueueName, replyStreamKey, type BatchLineResult } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DeploymentRegistry } from '../models/deployment-registry.service.js';
import { ReplyRelay } from '../relay/reply-relay.service.js';
import { BatchRepository } from '../batches/batch.repository.js';

const BATCH_LINE_JOB = /^(batch_[a-f0-9]{24})-(\d+)$/;

/**
 * A job can fail with no worker left to say so (it stalled — killed every
 * worker that took it — more often than allowed). BullMQ records that; this
 * turns it into the error the waiting client, or the batch, needs.
 */
@Injectable()
export class JobFailureWatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobFailureWatcher.name);
  private readonly events: QueueEvents[] = [];

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly registry: DeploymentRegistry,
    private readonly relay: ReplyRelay,
    private readonly batches: BatchRepository,
  ) {}

  onApplicationBootstrap(): void {
    for (const deployment of this.registry.all) {
      const events = new QueueEvents(chatQueueName(deployment.id), {
        connection: { url: this.config.redis.url, maxRetriesPerRequest: null },
        prefix: this.config.redis.prefix,
      });
      events.on('error', (err) => this.logger.warn(`Queue events ${deployment.id}: ${err.message}`));
      events.on('failed', ({ jobId, failedReason }) => void this.onFailed(deployment.id, jobId, failedReason));
      this.events.push(events);
    }
  }

  private async onFailed(deployment: string, jobId: string, reason: string): Promise<void> {
    const message = `The request failed and was not retried further: ${reason}`;
    const batchLine = BATCH_LINE_JOB.exec(jobId);
    if (!batchLine) {
      // If the worker already reported the failure, the reply has ended and this finds no reader.
      this.relay.fail(replyStreamKey(this.config.redis.prefix, jobId), new OpenAiHttpError(500, 'server_error', message, null, 'generation_failed'));
      return;
    }
    const [, batchId, line] = batchLine;
    const entry = await this.batches.redis.hget(batchInflightKey(this.config.redis.prefix, batchId), line);
    if (!entry) return;
    const { customId } = JSON.parse(entry) as { customId: string };
    // The runner writes each custom_id once, so this is harmless when the worker reported it too.
    const result: BatchLineResult = { ok: false, customId, line: Number(line), requestId: jobId, model: deployment, status: 500, code: 'generation_failed', message };
    await this.batches.redis.rpush(batchResultsKey(this.config.redis.prefix, batchId), JSON.stringify(result));
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.events.map((e) => e.close()));
  }
}
