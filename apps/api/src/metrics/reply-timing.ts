import { GEN_AI_PROVIDER } from '@conveyor/metrics';
import type { QueueTier, ReplyEvent } from '@conveyor/queue';
import type { GenAiOperation } from '../contracts/surface-route.js';
import type { PlatformMetrics } from './platform-metrics.service.js';

/**
 * Turns one reply's events into queue-wait, first-token, inter-token and whole-request observations,
 * under the platform's names, vLLM's and OpenTelemetry's GenAI ones.
 */
export class ReplyTiming {
  private startedAt: number | null = null;
  private firstTextAt: number | null = null;
  private lastTextAt = 0;
  private lastTokens = 0;
  // Each family's labels, made once: observe() runs for every event of the reply.
  private readonly labels: { deployment: string };
  private readonly waitLabels: { deployment: string; tier: QueueTier };
  private readonly model: { model_name: string };
  /** Null for a job that is no model request (tokenizing): only the platform's own metrics see it. */
  private readonly genAi: {
    gen_ai_operation_name: GenAiOperation;
    gen_ai_provider_name: string;
    gen_ai_request_model: string;
  } | null;

  constructor(
    private readonly metrics: PlatformMetrics,
    private readonly deployment: string,
    private readonly enqueuedAt: number,
    // A resumed stream's reply was timed by the replica that accepted it.
    private readonly record: boolean,
    operation: GenAiOperation | null = null,
    tier: QueueTier = 'default',
  ) {
    this.labels = { deployment };
    this.waitLabels = { deployment, tier };
    this.model = { model_name: deployment };
    this.genAi = operation && {
      gen_ai_operation_name: operation,
      gen_ai_provider_name: GEN_AI_PROVIDER,
      gen_ai_request_model: deployment,
    };
  }

  observe(event: ReplyEvent): void {
    if (!this.record) return;
    const now = Date.now();
    const { labels, model, genAi } = this;
    const sinceAccepted = (now - this.enqueuedAt) / 1000;
    if (event.type === 'start' && this.startedAt === null) {
      this.startedAt = now;
      this.metrics.queueWait.observe(this.waitLabels, sinceAccepted);
      if (genAi) this.metrics.vllm.queueTime.observe(model, sinceAccepted);
    } else if (event.type === 'delta' && !event.choice) {
      this.observeText(now, event.tokens ?? this.lastTokens + 1, sinceAccepted);
    } else if (event.type === 'end') {
      this.metrics.tokens.inc(labels, event.usage.completionTokens);
      this.metrics.countPrompt(this.deployment, event.usage);
      const seconds = (now - (this.startedAt ?? now)) / 1000;
      if (seconds > 0) this.metrics.tokensPerSecond.observe(labels, event.usage.completionTokens / seconds);
      if (!genAi) return;
      this.metrics.vllm.e2eLatency.observe(model, sinceAccepted);
      this.metrics.genAi.requestDuration.observe({ ...genAi, error_type: '' }, sinceAccepted);
      const after = event.usage.completionTokens - 1;
      if (this.firstTextAt !== null && after > 0)
        this.metrics.genAi.timePerOutputToken.observe(genAi, (now - this.firstTextAt) / 1000 / after);
    } else if (event.type === 'error' && genAi) {
      this.metrics.genAi.requestDuration.observe({ ...genAi, error_type: event.code }, sinceAccepted);
    }
  }

  /** The first text is the first token; later text shares the time since the one before among its tokens. */
  private observeText(now: number, tokens: number, sinceAccepted: number): void {
    const { model, genAi } = this;
    if (this.firstTextAt === null) {
      this.firstTextAt = now;
      this.metrics.timeToFirstToken.observe(this.labels, sinceAccepted);
      if (genAi) {
        this.metrics.vllm.timeToFirstToken.observe(model, sinceAccepted);
        this.metrics.genAi.timeToFirstToken.observe(genAi, sinceAccepted);
      }
    } else if (genAi && tokens > this.lastTokens) {
      const gap = (now - this.lastTextAt) / 1000 / (tokens - this.lastTokens);
      for (let i = this.lastTokens; i < tokens; i++) this.metrics.vllm.interTokenLatency.observe(model, gap);
    }
    this.lastTextAt = now;
    this.lastTokens = Math.max(this.lastTokens, tokens);
  }
}
