import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';
import { input } from '../../../../test/support/batch-fakes.js';
import { deliveryState } from '../webhooks/bullmq-webhook-outbox.adapter.js';
import { BatchesService } from './batches.service.js';

describe("BatchesService.webhookDeliveries: a batch's event on its way to the owner's webhook", () => {
  let h: BatchRunnerHarness;
  let service: BatchesService;

  beforeEach(() => {
    h = startHarness();
    service = new BatchesService(h.config, h.records, h.files, h.expiries, h.outbox);
  });
  afterEach(stopHarness);

  const created = async () =>
    service.create('anonymous', {
      input_file_id: h.files.put(input(['a'])),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });

  it('lists none while the batch runs, and its one event once it has ended and is queued', async () => {
    const batch = await created();
    expect((await service.webhookDeliveries('anonymous', batch.id)).data).toEqual([]);
    await service.cancel('anonymous', batch.id);
    const ended = await h.runToEnd(h.runner(), batch.id);
    const event = ended.ended_event!;
    // The key here has no webhook: the event was never queued, so there is no delivery to show.
    expect((await service.webhookDeliveries('anonymous', batch.id)).data).toEqual([]);
    await h.outbox.enqueue({ owner: 'anonymous', event });
    expect(await service.webhookDeliveries('anonymous', batch.id)).toEqual({
      object: 'list',
      data: [
        {
          object: 'webhook_delivery',
          event_id: event.id,
          type: 'batch.cancelled',
          status: 'pending',
          attempts: 0,
          last_error: null,
          finished_at: null,
        },
      ],
      first_id: event.id,
      last_id: event.id,
      has_more: false,
    });
  });

  it("answers another key's batch as a missing one", async () => {
    const batch = await created();
    await expect(service.webhookDeliveries('someone-else', batch.id)).rejects.toMatchObject({ status: 404 });
  });

  it("reads a delivery job's BullMQ state as the delivery's", () => {
    const job = (attemptsMade: number, failedReason = '', finishedOn?: number) => ({
      attemptsMade,
      failedReason,
      finishedOn,
    });
    expect(deliveryState('waiting', job(0))).toEqual({
      status: 'pending',
      attempts: 0,
      lastError: null,
      finishedAt: null,
    });
    expect(deliveryState('delayed', job(2, 'HTTP 500'))).toMatchObject({ status: 'retrying', lastError: 'HTTP 500' });
    expect(deliveryState('completed', job(3, 'HTTP 500', 1000))).toEqual({
      status: 'delivered',
      attempts: 3,
      lastError: 'HTTP 500',
      finishedAt: 1000,
    });
    expect(deliveryState('failed', job(8, 'timeout', 2000))).toMatchObject({ status: 'failed', finishedAt: 2000 });
  });
});
