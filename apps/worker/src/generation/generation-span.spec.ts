import { afterAll, describe, expect, it } from '@jest/globals';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { GenerateResult } from '@conveyor/engine';
import type { GenerationJobData } from '@conveyor/queue';
import { flushTracing, startTracing, stopTracing } from '@conveyor/telemetry';
import { GenerationSpan } from './generation-span.js';

const exporter = new InMemorySpanExporter();
startTracing(
  { url: 'http://127.0.0.1:9/v1/traces', protocol: 'http/json', serviceName: null, prompts: true },
  'conveyor-worker',
  () => exporter,
);
afterAll(() => stopTracing());

const job: GenerationJobData = {
  requestId: 'req-1',
  deployment: 'alpha',
  model: 'gpt-alias',
  messages: [{ role: 'user', content: 'What is a zebra?' }],
  sampling: { temperature: 0.2, seed: 7 },
  stop: ['END'],
  maxTokens: 8,
  enqueuedAt: Date.now() - 50,
};

const result: GenerateResult = {
  finishReason: 'stop',
  finishReasons: ['stop'],
  usage: { promptTokens: 12, completionTokens: 2, cachedTokens: 8 },
  aborted: false,
};

/** The spans of one attempt at the job, exported. */
async function attempt(): Promise<ReturnType<InMemorySpanExporter['getFinishedSpans']>> {
  exporter.reset();
  const span = new GenerationSpan(job, 'openai', 1, false);
  await span.run(async () => {
    span.started(12);
    span.output({ choice: 0, text: 'A horse' });
    span.output({ choice: 0, text: ' with stripes.' });
  });
  span.finished(result);
  span.end();
  await flushTracing();
  return exporter.getFinishedSpans();
}

describe('a generation span with TRACE_PROMPTS on', () => {
  it('carries the GenAI attributes, its queue wait and prefill, and the prompt and output asked for', async () => {
    const spans = await attempt();
    const generation = spans.find((s) => s.name === 'chat gpt-alias')!;
    expect(generation.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-alias',
      'gen_ai.request.temperature': 0.2,
      'gen_ai.request.seed': 7,
      'gen_ai.request.max_tokens': 8,
      'gen_ai.request.stop_sequences': ['END'],
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 2,
      'gen_ai.usage.cache_read.input_tokens': 8,
      'gen_ai.input.messages': JSON.stringify(job.messages),
      'gen_ai.output.messages': JSON.stringify(['A horse with stripes.']),
    });
    expect(generation.events.map((e) => e.name)).toEqual(['first chunk', 'prompt reused']);
    const children = spans.filter((s) => s.parentSpanContext?.spanId === generation.spanContext().spanId);
    expect(children.map((s) => s.name).sort()).toEqual(['prefill', 'queue wait']);
  });
});
