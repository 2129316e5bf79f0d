/**
 * A GenerationService over the in-memory stand-ins, as each of its specs builds it afresh: two deployments,
 * short deadlines and a small queue, and the requests a feature service would make of it.
 */
import { afterEach, beforeAll, beforeEach, expect, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Histogram } from 'prom-client';
import { loadConfig, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import type { GenerationJobData, ReplyEvent } from '@conveyor/queue';
import { TokenQuota } from '../../apps/api/src/auth/token-quota.service.js';
import { DeploymentRegistry } from '../../apps/api/src/deployments/deployment-registry.service.js';
import type { SubmitOptions } from '../../apps/api/src/generation/generation.service.js';
import type { ReplyRun } from '../../apps/api/src/contracts/reply-run.js';
import type { AskedTerms } from '../../apps/api/src/generation/request-terms.js';
import { PlatformMetrics } from '../../apps/api/src/metrics/platform-metrics.service.js';
import { NoRoutes } from './batch-fakes.js';
import { InMemoryTokenQuotas } from './token-quota-fakes.js';
import {
  FakeAdmission,
  FakeLiveWorkers,
  FakeReplyRelay,
  InMemoryImageStore,
  InMemoryJobQueue,
  InMemoryUsage,
} from './generation-fakes.js';
import { configuredKeys } from './api-key-fakes.js';
import { generationPipeline } from './generation-pipeline.js';

export const REQUEST_TIMEOUT_MS = 60_000;
export const QUEUE_TIMEOUT_MS = 5_000;
export const MAX_QUEUE_DEPTH = 3;
/** The key whose requests are held to a token quota (`anonymous`, the default caller, has none). */
export const METERED = { name: 'metered', perMinute: 1_000 };
export const FLEX_QUEUE_DEPTH = 1;

function platformConfig(): PlatformConfig {
  const base = loadConfig({});
  const deployment = (id: string): DeploymentConfig => ({ ...base.deployments[0], id });
  return {
    ...base,
    api: {
      ...base.api,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      queueTimeoutMs: QUEUE_TIMEOUT_MS,
      maxQueueDepth: MAX_QUEUE_DEPTH,
      flexQueueDepth: FLEX_QUEUE_DEPTH,
    },
    deployments: [deployment('alpha'), deployment('beta')],
    apiKeys: [{ name: METERED.name, sha256: '00'.repeat(32), tokenLimit: { perMinute: METERED.perMinute } }],
  };
}

/** The chat surface as the pipeline reads it. */
export const CHAT_SURFACE = { idPrefix: 'chatcmpl-', route: '/v1/chat/completions', operation: 'chat' } as const;

export const OPTIONS: SubmitOptions = {
  surface: CHAT_SURFACE,
  model: 'alpha',
  stream: true,
  prompt: [],
  caller: 'anonymous',
};

/** How a resumed chat reply's id starts, its route and its timing. */
export const RESUMED = CHAT_SURFACE;

export const start: ReplyEvent = { type: 'start', attempt: 1, seq: 0, promptTokens: 4, resumed: false };
export const delta = (text: string, seq: number): ReplyEvent => ({ type: 'delta', attempt: 1, seq, text });
export const end = (seq: number): ReplyEvent => ({
  type: 'end',
  attempt: 1,
  seq,
  finishReason: 'stop',
  usage: { promptTokens: 4, completionTokens: 2 },
});

export const keyOf = (requestId: string) => requestId;
export const requestIdOf = (run: ReplyRun) => run.who.id.slice(CHAT_SURFACE.idPrefix.length);

/** How many observations a histogram holds for a deployment. */
export async function observations<L extends string>(histogram: Histogram<L>, deployment: string): Promise<number> {
  const { values } = await histogram.get();
  const labelled = (v: { labels: object }) => (v.labels as { deployment?: string }).deployment === deployment;
  const counts = values.filter((v) => v.metricName?.endsWith('_count') && labelled(v));
  return counts.reduce((sum, v) => sum + v.value, 0);
}

/**
 * A fresh service and its stand-ins. `signal` is read at each request, not once: a test may replace its
 * client between requests.
 */
export function generationHarness(signal: () => AbortSignal) {
  const config = platformConfig();
  const registry = new DeploymentRegistry(config);
  const queue = new InMemoryJobQueue();
  const relay = new FakeReplyRelay();
  const workers = new FakeLiveWorkers({ alpha: 2, beta: 1 });
  const metrics = new PlatformMetrics(registry, queue, workers, { active: async () => [], get: async () => null });
  const images = new InMemoryImageStore();
  const usage = new InMemoryUsage();
  const quotas = new InMemoryTokenQuotas();
  const admission = new FakeAdmission(queue);
  const { service, followed } = generationPipeline({
    config,
    registry,
    queue,
    relay,
    workers,
    metrics,
    places: admission,
    routes: new NoRoutes(),
    images,
    usage,
    quota: new TokenQuota(configuredKeys(config), quotas),
  });
  /** Every job the builder was asked for, with the request id and time it was given. */
  const built: { requestId: string; now: number; job: GenerationJobData }[] = [];

  /** The job builder a feature service passes for a request to `deployment`. */
  const builderFor =
    (deployment: DeploymentConfig) =>
    (requestId: string, now: number): GenerationJobData => {
      const job: GenerationJobData = {
        requestId,
        deployment: deployment.id,
        messages: [{ role: 'user', content: 'Hi' }],
        sampling: { temperature: 0 },
        stop: [],
        enqueuedAt: now,
      };
      built.push({ requestId, now, job });
      return job;
    };

  /** What a feature service does with a request: find its deployment, then submit its job. */
  const request = async (
    model: string,
    only?: DeploymentConfig,
    asked?: AskedTerms,
    caller = OPTIONS.caller,
  ): Promise<ReplyRun> => {
    const deployment = service.deploymentFor(model, only);
    return service.submit(deployment, builderFor(deployment), signal(), {
      ...OPTIONS,
      model: deployment.id,
      asked,
      caller,
    });
  };

  /** Asserts that nothing was queued, built or followed for a refused request. */
  const expectNothingQueued = () => {
    expect(built).toEqual([]);
    expect(queue.enqueued).toEqual([]);
    expect(relay.subscribed).toEqual([]);
  };

  return {
    registry,
    queue,
    relay,
    metrics,
    service,
    followed,
    built,
    images,
    usage,
    quotas,
    admission,
    builderFor,
    request,
    expectNothingQueued,
  };
}

export type GenerationHarness = ReturnType<typeof generationHarness>;

/** The harness of the running test, and the client its requests come from. */
export type GenerationTest = GenerationHarness & { client: AbortController };

/**
 * Builds a fresh harness before each test, under fake timers (the deadlines are timers, so no test
 * waits for one), and returns the object that holds it. `client` is read at each request: a test may
 * replace it between requests.
 */
export function useGenerationHarness(): GenerationTest {
  const t = {} as GenerationTest;

  beforeAll(() => {
    // The service logs every request; the tests read its effects, not its log lines.
    Logger.overrideLogger(false);
  });

  beforeEach(() => {
    jest.useFakeTimers();
    t.client = new AbortController();
    const harness = generationHarness(() => t.client.signal);
    Object.assign(t, harness);
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  return t;
}
