import { Inject, Injectable } from '@nestjs/common';
import { Registry, collectDefaultMetrics } from 'prom-client';
import {
  BATCH_FOLDED_PROMPT_TOKENS,
  BATCH_LINES,
  BATCH_LINES_FOLDED,
  BATCH_PLAN_GROUPS,
  GENERATED_TOKENS,
  GEN_AI_REQUEST_DURATION,
  GEN_AI_TIME_PER_OUTPUT_TOKEN,
  GEN_AI_TIME_TO_FIRST_TOKEN,
  HTTP_REQUESTS,
  LIVE_WORKERS,
  PREFIX_ROUTES,
  PROMPT_TOKENS,
  QUEUE_DEPTH,
  QUEUE_WAIT,
  TIME_TO_FIRST_TOKEN,
  TOKENS_PER_SECOND_OF_REPLY,
  VLLM_E2E_LATENCY,
  VLLM_GENERATION_TOKENS,
  VLLM_INTER_TOKEN_LATENCY,
  VLLM_PREFIX_CACHE_HITS,
  VLLM_PREFIX_CACHE_QUERIES,
  VLLM_PROMPT_TOKENS,
  VLLM_QUEUE_TIME,
  VLLM_TIME_TO_FIRST_TOKEN,
  counterOf,
  gaugeOf,
  histogramOf,
} from '@conveyor/metrics';
import type { TokenUsage } from '@conveyor/queue';
import { JobQueue } from '../contracts/job-queue.port.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { LiveWorkers } from '../repositories/live-workers.port.js';

/**
 * Prometheus metrics of this API replica, built from their declarations in `@conveyor/metrics` (which
 * docs/metrics.md is generated from). Queue depths, live workers and batch lines are read from Redis
 * when scraped, so every replica reports the same platform-wide values for them.
 */
@Injectable()
export class PlatformMetrics {
  readonly registry = new Registry();

  readonly requests = counterOf(HTTP_REQUESTS, this.registry);
  readonly queueWait = histogramOf(QUEUE_WAIT, this.registry);
  readonly timeToFirstToken = histogramOf(TIME_TO_FIRST_TOKEN, this.registry);
  readonly promptTokens = counterOf(PROMPT_TOKENS, this.registry);
  readonly prefixRoutes = counterOf(PREFIX_ROUTES, this.registry);
  readonly tokens = counterOf(GENERATED_TOKENS, this.registry);
  readonly tokensPerSecond = histogramOf(TOKENS_PER_SECOND_OF_REPLY, this.registry);
  /** What batches' plans did: groups fed together, and repeats answered without running. */
  readonly batchPlan = {
    groups: counterOf(BATCH_PLAN_GROUPS, this.registry),
    linesFolded: counterOf(BATCH_LINES_FOLDED, this.registry),
    foldedPromptTokens: counterOf(BATCH_FOLDED_PROMPT_TOKENS, this.registry),
  };

  /** vLLM's names, by `model_name` (the deployment's id). */
  readonly vllm = {
    promptTokens: counterOf(VLLM_PROMPT_TOKENS, this.registry),
    generationTokens: counterOf(VLLM_GENERATION_TOKENS, this.registry),
    timeToFirstToken: histogramOf(VLLM_TIME_TO_FIRST_TOKEN, this.registry),
    interTokenLatency: histogramOf(VLLM_INTER_TOKEN_LATENCY, this.registry),
    e2eLatency: histogramOf(VLLM_E2E_LATENCY, this.registry),
    queueTime: histogramOf(VLLM_QUEUE_TIME, this.registry),
    prefixCacheQueries: counterOf(VLLM_PREFIX_CACHE_QUERIES, this.registry),
    prefixCacheHits: counterOf(VLLM_PREFIX_CACHE_HITS, this.registry),
  };

  /** OpenTelemetry's GenAI server histograms. */
  readonly genAi = {
    requestDuration: histogramOf(GEN_AI_REQUEST_DURATION, this.registry),
    timeToFirstToken: histogramOf(GEN_AI_TIME_TO_FIRST_TOKEN, this.registry),
    timePerOutputToken: histogramOf(GEN_AI_TIME_PER_OUTPUT_TOKEN, this.registry),
  };

  /**
   * Counts a finished reply's or batch line's tokens: its prompt, what its worker computed of it and
   * what it reused from the prompt cache, and what it generated.
   */
  countPrompt(deployment: string, usage: TokenUsage): void {
    const cached = usage.cachedTokens ?? 0;
    this.promptTokens.inc({ deployment, source: 'computed' }, usage.promptTokens - cached);
    this.promptTokens.inc({ deployment, source: 'cached' }, cached);
    const model = { model_name: deployment };
    this.vllm.promptTokens.inc(model, usage.promptTokens);
    this.vllm.generationTokens.inc(model, usage.completionTokens);
    this.vllm.prefixCacheQueries.inc(model, usage.promptTokens);
    this.vllm.prefixCacheHits.inc(model, cached);
  }

  constructor(
    registry: DeploymentRegistry,
    queue: JobQueue,
    workers: LiveWorkers,
    // Only what the batch-lines gauge reads, so the metrics can be built over fakes of the repositories.
    @Inject(BatchRecords) batches: Pick<BatchRecords, 'active' | 'get'>,
  ) {
    const deployments = () => registry.all.map((d) => d.id);
    collectDefaultMetrics({ register: this.registry, prefix: 'conveyor_api_' });
    gaugeOf(QUEUE_DEPTH, this.registry, async (depth) => {
      for (const d of deployments()) {
        const c = await queue.counts(d);
        depth.set({ deployment: d, kind: 'interactive' }, c.waiting);
        depth.set({ deployment: d, kind: 'batch' }, c.batch);
        depth.set({ deployment: d, kind: 'running' }, c.active);
      }
    });
    gaugeOf(LIVE_WORKERS, this.registry, async (live) => {
      for (const [d, n] of await workers.counts(deployments())) live.set({ deployment: d }, n);
    });
    gaugeOf(BATCH_LINES, this.registry, async (lines) => {
      const totals = { completed: 0, failed: 0, pending: 0 };
      for (const id of await batches.active()) {
        const b = await batches.get(id);
        if (!b) continue;
        totals.completed += b.completed;
        totals.failed += b.failed;
        totals.pending += Math.max(0, b.total - b.completed - b.failed);
      }
      for (const [state, n] of Object.entries(totals)) lines.set({ state }, n);
    });
  }
}
