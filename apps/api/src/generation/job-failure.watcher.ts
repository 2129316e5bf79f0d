import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { QueueEvents } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { deploymentQueueName, parseBatchLineJobId, replyStreamKey, type BatchLineResult } from '@conveyor/queue';
import { connectionOptions } from '@conveyor/redis';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { BatchLines } from '../repositories/batch-lines.port.js';
import { ReplyRelay } from './reply-relay.port.js';

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
    private readonly batchLines: BatchLines,
  ) {}

  onApplicationBootstrap(): void {
    for (const deployment of this.registry.all) {
      const events = new QueueEvents(deploymentQueueName(deployment.id), {
        connection: connectionOptions(this.config.redis, `conveyor-api-events-${deployment.id}`, 'blocking'),
        prefix: this.config.redis.prefix,
      });
      events.on('error', (err) => this.logger.warn(`Queue events ${deployment.id}: ${err.message}`));
      events.on('failed', ({ jobId, failedReason }) => void this.onFailed(deployment.id, jobId, failedReason));
      this.events.push(events);
    }
  }

  private async onFailed(deployment: string, jobId: string, reason: string): Promise<void> {
    const message = `The request failed and was not retried further: ${reason}`;
    const batchLine = parseBatchLineJobId(jobId);
    if (!batchLine) {
      // If the worker already reported the failure, the reply has ended and this finds no reader.
      this.relay.fail(
        replyStreamKey(this.config.redis.prefix, jobId),
        OpenAiHttpError.serverError(message, ErrorCode.generationFailed),
      );
      return;
    }
    const { batchId, line } = batchLine;
    const entry = await this.batchLines.inflightLine(batchId, line).catch(() => null);
    if (!entry) return;
    // The runner writes each custom_id once, so this is harmless when the worker reported it too.
    const result: BatchLineResult = {
      ok: false,
      customId: entry.customId,
      line,
      requestId: jobId,
      model: deployment,
      status: 500,
      code: ErrorCode.generationFailed,
      message,
    };
    await this.batchLines
      .pushResult(batchId, result)
      .catch((err: Error) => this.logger.warn(`Batch ${batchId}: ${err.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.events.map((e) => e.close()));
  }
}
