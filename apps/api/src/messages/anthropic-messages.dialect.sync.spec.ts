import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '@conveyor/config';
import { MessagesRequestDto } from '@conveyor/protocol';
import type { GenerationJobData, QueuedJobData } from '@conveyor/queue';
import { GenerationService } from '../generation/generation.service.js';
import { parseRequest } from '../generation/parse-request.js';
import type { ReplyRun } from '../contracts/reply-run.js';
import type { TokenizeService } from '../generation/tokenize.service.js';
import { anthropicMessages } from './anthropic-messages.dialect.js';
import { MessagesService } from './messages.service.js';

const config = loadConfig({ MODEL: 'tiny' });
const deployment = config.deployments[0]!;

/** A body with every field the Messages route takes, each set away from its default. */
const body = {
  model: deployment.id,
  max_tokens: 24,
  system: 'Be brief.',
  messages: [
    { role: 'user', content: 'What is the weather?' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
  ],
  tools: [{ name: 'weather', description: 'The weather', input_schema: { type: 'object', properties: {} } }],
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  stop_sequences: ['END'],
  temperature: 0.5,
  top_p: 0.9,
  top_k: 7,
  min_p: 0.05,
  repetition_penalty: 1.1,
  presence_penalty: 0.2,
  frequency_penalty: 0.3,
  seed: 42,
  ignore_eos: true,
  metadata: { user_id: 'u' },
};

/** The job the synchronous route queues for `raw`: the handler's parsing, then the service's. */
async function syncJob(raw: object): Promise<QueuedJobData> {
  let job: QueuedJobData | undefined;
  // The pipeline's own start (its check and job), over a submit that keeps the job instead of queueing it.
  const generation = Object.assign(Object.create(GenerationService.prototype) as GenerationService, {
    config,
    deploymentFor: () => deployment,
    submit: (_d: unknown, build: (requestId: string, now: number) => QueuedJobData) => {
      job = build('req-1', 1000);
      return Promise.resolve({} as ReplyRun);
    },
  });
  const service = new MessagesService(config, generation, {} as TokenizeService);
  await service.start(parseRequest(MessagesRequestDto, raw), {
    caller: 'anonymous',
    signal: new AbortController().signal,
    deadlineMs: null,
  });
  return job!;
}

/** The job a Message Batch line queues for the same `raw`. */
function batchJob(raw: object): QueuedJobData {
  const line = anthropicMessages.parse(raw);
  line.check(deployment, config.api.images);
  return { ...line.toJob('req-1', deployment), enqueuedAt: 1000 };
}

/** A generation job's sampling; a Messages body makes nothing else. */
function samplingOf(job: QueuedJobData): GenerationJobData['sampling'] {
  if (!('sampling' in job)) throw new Error(`not a generation job: ${JSON.stringify(job)}`);
  return job.sampling;
}

describe('a Message Batch request and the same body sent to /v1/messages', () => {
  it('become the same job, field for field', async () => {
    expect(batchJob(body)).toEqual(await syncJob(body));
  });

  it('carry ignore_eos: the reply runs to max_tokens in either', async () => {
    expect(samplingOf(await syncJob(body))).toMatchObject({ ignoreEos: true });
    expect(samplingOf(batchJob(body))).toMatchObject({ ignoreEos: true });
    expect(samplingOf(batchJob({ ...body, ignore_eos: undefined })).ignoreEos).toBeUndefined();
  });
});
