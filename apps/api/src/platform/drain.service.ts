import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { ReplyRelay } from '../contracts/reply-relay.port.js';

/**
 * Graceful stop of an API replica: readiness turns 503 at once so load
 * balancers stop sending traffic, new chat requests are refused, and open
 * replies get the grace period to finish before they end with an error event.
 */
@Injectable()
export class DrainService {
  private readonly logger = new Logger(DrainService.name);
  private drainingSince: number | null = null;

  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly relay: ReplyRelay,
  ) {}

  get draining(): boolean {
    return this.drainingSince !== null;
  }

  assertAccepting(): void {
    if (this.draining) throw OpenAiHttpError.unavailable('This server is shutting down; retry on another replica.');
  }

  async drain(): Promise<void> {
    this.drainingSince = Date.now();
    const until = Date.now() + this.config.api.shutdownGraceMs;
    while (this.relay.open > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (this.relay.open > 0) {
      this.logger.warn(
        `Ending ${this.relay.open} open repl${this.relay.open === 1 ? 'y' : 'ies'}: shutdown grace period over`,
      );
      this.relay.failAll(
        new OpenAiHttpError(
          503,
          'service_unavailable',
          'The server shut down before the reply was complete; resume it with GET /v1/chat/completions/{id}/stream and Last-Event-ID.',
          null,
          ErrorCode.serverShuttingDown,
        ),
      );
      // Let the stream writers flush their error events before the sockets close.
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
