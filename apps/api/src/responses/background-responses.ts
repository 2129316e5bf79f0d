import { Injectable } from '@nestjs/common';
import type { DeploymentConfig } from '@conveyor/config';
import type { ResponseObject } from '@conveyor/openai';
import type { ResponseRequestDto } from '@conveyor/protocol';
import { ReplyAccumulator } from '@conveyor/queue';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { pendingResponse, toResponseObject } from './response.mapper.js';
import { ResponsesService, type StartedResponse } from './responses.service.js';

/**
 * Background responses (`background: true`): answered at once as queued, then followed by this
 * replica, which stores each step (in progress, then completed, incomplete or failed) for the client
 * to poll. A cancel stops the job and wins over any later step.
 */
@Injectable()
export class BackgroundResponses {
  /** The background responses this replica follows, by id: aborting one ends its reply and stops its job. */
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly responses: ResponsesService) {}

  async start(dto: ResponseRequestDto, caller: string, only?: DeploymentConfig): Promise<ResponseObject> {
    const controller = new AbortController();
    const started = await this.responses.start(dto, caller, controller.signal, only, 'queued');
    const id = started.run.who.id;
    const following = this.follow(started);
    if (!started.stored) {
      // Nobody could ever poll it: stop it rather than generate for no one.
      controller.abort();
      await following;
      throw OpenAiHttpError.unavailable('The response could not be stored; retry shortly.');
    }
    this.running.set(id, controller);
    void following.finally(() => this.running.delete(id));
    return pendingResponse(started.run.who, started.echo, 'queued');
  }

  /** Stops a background response this replica follows; true when it was one. */
  stop(id: string): boolean {
    const controller = this.running.get(id);
    controller?.abort();
    return controller !== undefined;
  }

  private async follow(started: StartedResponse): Promise<void> {
    const reply = new ReplyAccumulator();
    let taken = false;
    try {
      for await (const event of started.run.events) {
        if (event.type === 'start' && !taken) {
          taken = true;
          await this.responses.progressed(started);
        }
        const result = reply.apply(event);
        if (result) {
          await this.responses.finished(started, toResponseObject(started.run.who, result, started.echo));
          return;
        }
      }
      throw OpenAiHttpError.unavailable('The reply ended before it was complete.');
    } catch (err) {
      // A cancelled response stays cancelled: the store keeps the first end it is given.
      await this.responses.failed(started, err);
    }
  }
}
