import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { QueueEvents } from 'bullmq';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { deploymentQueueName, parseBatchLineJobId, replyStreamKey } from '@conveyor/queue';
import { connectionOptions } from '@conveyor/redis';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { ReplyRelay } from './reply-relay.port.js';

/**
 * A job can fail with no worker left to say so (it stalled — killed every
 * worker that took it — more often than allowed). BullMQ records that; this
 * turns it into the error the waiting client needs. A batch line's failure is
 * the worker's alone to report, that case included: the worker that fetches
 * such a job fails it and hands the failure to the batch, which takes one
 * result per line.
 */
@Injectable()
export class JobFailureWatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobFailureWatcher.name);
  private readonly events: QueueEvents[] = [];

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly registry: DeploymentRegistry,
    private readonly relay: ReplyRelay,
  ) {}

  onApplicationBootstrap(): void {
    for (const deployment of this.registry.all) {
      const events = new QueueEvents(deploymentQueueName(deployment.id), {
        connection: connectionOptions(this.config.redis, `conveyor-api-events-${deployment.id}`, 'blocking'),
        prefix: this.config.redis.prefix,
      });
      events.on('error', (err) => this.logger.warn(`Queue events ${deployment.id}: ${err.message}`));
      events.on('failed', ({ jobId, failedReason }) => this.onFailed(jobId, failedReason));
      this.events.push(events);
    }
  }

  private onFailed(jobId: string, reason: string): void {
    // A batch line has no reader here: its worker has reported it to the batch.
    if (parseBatchLineJobId(jobId)) return;
    // If the worker already reported the failure, the reply has ended and this finds no reader.
    this.relay.fail(
      replyStreamKey(this.config.redis.prefix, jobId),
      OpenAiHttpError.serverError(
        `The request failed and was not retried further: ${reason}`,
        ErrorCode.generationFailed,
      ),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.events.map((e) => e.close()));
  }
}
