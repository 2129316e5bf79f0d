import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import type { PlatformConfig } from '@conveyor/config';
import { RequestProblem } from '@conveyor/protocol';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { DrainService } from '../platform/drain.service.js';
import { HttpGeneration } from './http-generation.js';
import type { ReplyRelay } from '../contracts/reply-relay.port.js';

/** The parts of a Fastify reply the helper touches: its headers and its socket's `close`. */
function replyStandIn(requestHeaders: Record<string, string> = {}) {
  const raw = Object.assign(new EventEmitter(), { writableFinished: false });
  const headers: Record<string, string> = {};
  const reply = {
    raw,
    request: { headers: requestHeaders },
    headers(set: Record<string, string>) {
      Object.assign(headers, set);
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, raw, headers };
}

const drainService = () =>
  new DrainService({ api: { shutdownGraceMs: 0 } } as PlatformConfig, { open: 0 } as unknown as ReplyRelay);

describe('HttpGeneration', () => {
  it('parses the body, names the job in x-request-id with its admission headers, and stops the job when the client leaves early', () => {
    const { reply, raw, headers } = replyStandIn();
    const call = new HttpGeneration(drainService()).accept(reply, () => ({ model: 'alpha' }));
    expect(call.dto).toEqual({ model: 'alpha' });
    call.identify('7d4c5a8e', { 'x-ratelimit-limit-tokens': '1000' });
    expect(headers).toEqual({ 'x-request-id': '7d4c5a8e', 'x-ratelimit-limit-tokens': '1000' });
    expect(call.signal.aborted).toBe(false);
    raw.emit('close');
    expect(call.signal.aborted).toBe(true);
  });

  it('leaves the job alone when the connection closes after the reply was sent', () => {
    const { reply, raw } = replyStandIn();
    const { signal } = new HttpGeneration(drainService()).accept(reply);
    raw.writableFinished = true;
    raw.emit('close');
    expect(signal.aborted).toBe(false);
  });

  it('lets a body problem through as it was thrown, naming the field', () => {
    const { reply } = replyStandIn();
    const parse = () => {
      throw new RequestProblem('n must be at most 8.', 'n');
    };
    expect(() => new HttpGeneration(drainService()).accept(reply, parse)).toThrow(RequestProblem);
  });

  it('refuses with 503 while the replica drains, before reading the body', async () => {
    const drain = drainService();
    await drain.drain();
    let parsed = false;
    let refused: unknown;
    try {
      new HttpGeneration(drain).accept(replyStandIn().reply, () => (parsed = true));
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(OpenAiHttpError);
    expect((refused as OpenAiHttpError).status).toBe(503);
    expect(parsed).toBe(false);
  });
});
