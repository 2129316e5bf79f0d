import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { BatchRunnerHarness, startHarness, stopHarness } from '../../../../test/support/batch-runner.js';
import { MODEL, endpoints, jsonBodyStream } from '../../../../test/support/batch-fakes.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { MessageBatchesService } from './message-batches.service.js';

describe('MessageBatchesService.cancel', () => {
  let h: BatchRunnerHarness;
  let service: MessageBatchesService;

  beforeEach(() => {
    h = startHarness();
    service = new MessageBatchesService(h.config, endpoints, h.records, h.files, new DeploymentRegistry(h.config));
  });
  afterEach(stopHarness);

  it('is canceling from a cancel while the requests are still checked, and ends with each request canceled', async () => {
    const created = await service.create(
      'anonymous',
      jsonBodyStream({ requests: ['a', 'b'].map((custom_id) => ({ custom_id, params: { model: MODEL } })) }),
    );
    expect(h.records.records.get(created.id)?.status).toBe('validating');

    const canceling = await service.cancel('anonymous', created.id);
    expect(canceling).toMatchObject({ processing_status: 'canceling', cancel_initiated_at: expect.any(String) });
    // Stored as cancelling too, not only shown so: every reader of the record sees the cancel.
    expect(h.records.records.get(created.id)?.status).toBe('cancelling');

    await h.runToEnd(h.runner(), created.id);
    const ended = await service.get('anonymous', created.id);
    expect(ended).toMatchObject({
      processing_status: 'ended',
      request_counts: { processing: 0, succeeded: 0, errored: 0, canceled: 2, expired: 0 },
      cancel_initiated_at: canceling.cancel_initiated_at,
    });
    const results: unknown[] = [];
    for await (const line of await service.results('anonymous', created.id)) results.push(JSON.parse(line));
    expect(results).toEqual([
      { custom_id: 'a', result: { type: 'canceled' } },
      { custom_id: 'b', result: { type: 'canceled' } },
    ]);
  });
});
