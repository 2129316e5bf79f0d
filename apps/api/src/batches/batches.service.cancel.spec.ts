import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';
import { input } from '../../../../test/support/batch-fakes.js';
import { BatchesService } from './batches.service.js';

describe('BatchesService.cancel', () => {
  let h: BatchRunnerHarness;
  let service: BatchesService;

  beforeEach(() => {
    h = startHarness();
    service = new BatchesService(h.config, h.records, h.files, h.expiries, h.outbox);
  });
  afterEach(stopHarness);

  it('answers cancelling for a batch still validating, as OpenAI does, and the batch ends cancelled', async () => {
    const file = h.files.put(input(['a', 'b']));
    const created = await service.create('anonymous', {
      input_file_id: file,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(created.status).toBe('validating');

    const cancelling = await service.cancel('anonymous', created.id);
    expect(cancelling).toMatchObject({ status: 'cancelling', cancelling_at: expect.any(Number) });
    expect(await service.get('anonymous', created.id)).toMatchObject({ status: 'cancelling' });

    const record = await h.runToEnd(h.runner(), created.id);
    expect(record).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(Number), total: 2 });
    expect(record.cancelling_at).toBe(cancelling.cancelling_at);
    expect(h.queue.jobs.size).toBe(0);
    expect(h.files.lines(record.error_file_id).map((l) => [l.custom_id, l.error?.code])).toEqual([
      ['a', 'batch_cancelled'],
      ['b', 'batch_cancelled'],
    ]);
  });
});
