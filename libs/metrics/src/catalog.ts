import * as genAi from './gen-ai.metrics.js';
import type { MetricSpec } from './metric-spec.js';
import * as platform from './platform.metrics.js';
import * as vllm from './vllm.metrics.js';
import * as worker from './worker.metrics.js';

/** A set of metrics as the metrics page shows it: a heading, what to know about them, the declarations. */
export interface MetricSection {
  title: string;
  about: string;
  metrics: MetricSpec[];
}

const specs = (module: Record<string, unknown>): MetricSpec[] =>
  Object.values(module)
    .filter((v): v is MetricSpec => typeof v === 'object' && v !== null && 'kind' in v)
    .sort((a, b) => a.name.localeCompare(b.name));

/** Every metric the platform serves, by where it is served: what docs/metrics.md lists. */
export function metricSections(): MetricSection[] {
  return [
    {
      title: 'The platform',
      about:
        "Served by the API at `/metrics`. Gauges are read from Redis when scraped, so every replica reports the same fleet-wide values; counters and histograms count the replies the replica relayed (a batch line's tokens count on the replica that writes its result). Each replica adds Node.js's process metrics, prefixed `conveyor_api_`.",
      metrics: specs(platform),
    },
    {
      title: "vLLM's names",
      about:
        "Served by the API at `/metrics`, under the names and meanings of vLLM's metrics, so dashboards and autoscalers written for vLLM read a deployment as they read a vLLM server: `model_name` is the deployment's id. Times are measured where the API sees a reply's events; a worker writes its tokens at the end of each engine round, so tokens arriving together share the time between them.",
      metrics: specs(vllm),
    },
    {
      title: 'OpenTelemetry GenAI',
      about: `Served by the API at \`/metrics\`: OpenTelemetry's GenAI server metrics under the names Prometheus gives them, with the semantic conventions' attributes as labels. \`gen_ai_operation_name\` is \`chat\` (Chat Completions, Responses, Messages), \`text_completion\` or \`embeddings\`; \`gen_ai_provider_name\` is \`${genAi.GEN_AI_PROVIDER}\`; \`gen_ai_request_model\` is the deployment's id.`,
      metrics: specs(genAi),
    },
    {
      title: 'A worker',
      about:
        "Served by each worker at `/metrics` on `WORKER_METRICS_PORT` (none when it is 0): what only the worker sees. It adds Node.js's process metrics, prefixed `conveyor_worker_`.",
      metrics: specs(worker),
    },
  ];
}
