import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { EngineConfig } from '@conveyor/config';
import type { GenerateResult, OutputPiece } from '@conveyor/engine';
import type { GenerationJobData } from '@conveyor/queue';
import { GEN_AI, tracePrompts, tracer, type GenAiOperation } from '@conveyor/telemetry';

/** `gen_ai.provider.name` by engine: what actually ran the model, as the GenAI conventions name it. */
const PROVIDER: Record<EngineConfig['kind'], string> = {
  'llama-cpp': 'llama.cpp',
  'llama-server': 'llama.cpp',
  openai: 'openai',
  simulated: 'conveyor.simulated',
};

/**
 * One attempt of a generation job as a GenAI client span (`chat <model>`, `text_completion <model>`),
 * a child of BullMQ's consumer span: the request's parameters, the finish reasons, the token usage,
 * the time to the first chunk; and, as its children, the job's wait in the queue and the prompt's
 * prefill. Each attempt (a retry, a reply resumed by another worker) is its own span in the same
 * trace. Prompts and outputs go in only with TRACE_PROMPTS; keys never reach a job at all.
 */
export class GenerationSpan {
  private readonly span: Span;
  private readonly startedAt = Date.now();
  private prefill: Span | null = null;
  private firstChunkAt: number | null = null;
  private readonly outputs: string[] = [];

  /** `load`: when the deployment's model was loaded here, drawn in the trace of a job that waited for it. */
  constructor(
    data: GenerationJobData,
    engine: EngineConfig['kind'] | undefined,
    attempt: number,
    resumed: boolean,
    load?: { startedAt: number; endedAt: number },
  ) {
    const operation: GenAiOperation = data.prompts ? 'text_completion' : 'chat';
    const model = data.model ?? data.deployment;
    const s = data.sampling;
    this.span = tracer().startSpan(`${operation} ${model}`, {
      // The conventions' kind: a client of a model server in another process, internal where it runs in this one.
      kind: engine === 'llama-server' || engine === 'openai' ? SpanKind.CLIENT : SpanKind.INTERNAL,
      attributes: {
        [GEN_AI.operationName]: operation,
        [GEN_AI.providerName]: engine ? PROVIDER[engine] : 'llama.cpp',
        [GEN_AI.requestModel]: model,
        [GEN_AI.responseModel]: model,
        [GEN_AI.responseId]: data.requestId,
        [GEN_AI.requestTemperature]: s.temperature,
        [GEN_AI.requestTopP]: s.topP,
        [GEN_AI.requestTopK]: s.topK,
        [GEN_AI.requestPresencePenalty]: s.presencePenalty,
        [GEN_AI.requestFrequencyPenalty]: s.frequencyPenalty,
        [GEN_AI.requestSeed]: s.seed,
        [GEN_AI.requestMaxTokens]: data.maxTokens,
        [GEN_AI.requestStopSequences]: data.stop.length ? data.stop : undefined,
        [GEN_AI.requestChoiceCount]: data.n !== undefined && data.n !== 1 ? data.n : undefined,
        'conveyor.deployment': data.deployment,
        'conveyor.attempt': attempt,
        'conveyor.resumed': resumed,
        'conveyor.batch.id': data.batch?.batchId,
      },
    });
    // The wait between the API queuing the job and this attempt taking it, drawn where it happened.
    const parent = trace.setSpan(context.active(), this.span);
    if (attempt === 1) tracer().startSpan('queue wait', { startTime: data.enqueuedAt }, parent).end(this.startedAt);
    // The job waited for its model to load on demand: the load, as part of the wait.
    if (load && load.endedAt > data.enqueuedAt) {
      tracer()
        .startSpan(
          'model load',
          { startTime: load.startedAt, attributes: { 'conveyor.deployment': data.deployment } },
          parent,
        )
        .end(load.endedAt);
    }
    if (tracePrompts())
      this.span.setAttribute(GEN_AI.inputMessages, JSON.stringify(data.prompts ?? data.messages ?? []));
  }

  /** Runs `work` with this span active, so what it calls (an upstream's request) is its child. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return context.with(trace.setSpan(context.active(), this.span), work);
  }

  /** The prompt is tokenized: its prefill (prompt reuse included) runs until the first chunk. */
  started(promptTokens: number): void {
    this.prefill = tracer().startSpan(
      'prefill',
      { attributes: { [GEN_AI.usageInputTokens]: promptTokens } },
      trace.setSpan(context.active(), this.span),
    );
  }

  output(piece: OutputPiece): void {
    if (this.firstChunkAt === null) {
      this.firstChunkAt = Date.now();
      this.prefill?.end(this.firstChunkAt);
      this.prefill = null;
      this.span.setAttribute(GEN_AI.responseTimeToFirstChunk, (this.firstChunkAt - this.startedAt) / 1000);
      this.span.addEvent('first chunk');
    }
    if (tracePrompts() && piece.text) this.outputs[piece.choice] = (this.outputs[piece.choice] ?? '') + piece.text;
  }

  finished(result: GenerateResult): void {
    const { usage } = result;
    this.span.setAttributes({
      [GEN_AI.responseFinishReasons]: result.finishReasons,
      [GEN_AI.usageInputTokens]: usage.promptTokens,
      [GEN_AI.usageOutputTokens]: usage.completionTokens,
      [GEN_AI.usageCacheReadInputTokens]: usage.cachedTokens ?? 0,
      'conveyor.aborted': result.aborted,
    });
    if (usage.cachedTokens)
      this.span.addEvent('prompt reused', { [GEN_AI.usageCacheReadInputTokens]: usage.cachedTokens });
    if (tracePrompts()) this.span.setAttribute(GEN_AI.outputMessages, JSON.stringify(this.outputs));
  }

  /** Ends the span, with the error that ended the attempt, if one did. */
  end(err?: unknown): void {
    this.prefill?.end();
    if (err !== undefined) {
      this.span.recordException(err as Error);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    }
    this.span.end();
  }
}
