import type { Dashboard, Panel, VariableModel } from '@grafana/schema';
import { GEN_AI_REQUEST_DURATION } from './gen-ai.metrics.js';
import type { MetricSpec } from './metric-spec.js';
import {
  BATCH_LINES,
  HTTP_REQUESTS,
  PENDING_WORK,
  POOL_WORKERS,
  QUEUE_JOBS,
  QUEUE_WAIT,
  REDIS_COMMANDS,
  SEQUENCES,
} from './platform.metrics.js';
import {
  VLLM_E2E_LATENCY,
  VLLM_GENERATION_TOKENS,
  VLLM_INTER_TOKEN_LATENCY,
  VLLM_PREFIX_CACHE_HITS,
  VLLM_PREFIX_CACHE_QUERIES,
  VLLM_PROMPT_TOKENS,
  VLLM_QUEUE_TIME,
  VLLM_REQUESTS_RUNNING,
  VLLM_REQUESTS_WAITING,
  VLLM_TIME_TO_FIRST_TOKEN,
} from './vllm.metrics.js';

/**
 * The fleet's Grafana dashboard, generated from the metric declarations as vLLM generates its own: every
 * query names metrics through their declarations, so a renamed metric renames the query, and the test
 * beside this file runs each query against a real Prometheus scraping a platform.
 */

/** Grafana's variables the queries use, which a test replaces to run them on Prometheus alone. */
export const DASHBOARD_VARIABLES = {
  /** The deployments shown: vLLM's `model_name` label, holding a deployment's id. */
  deployment: '$model_name',
  /** Grafana's `rate()` window: four scrape intervals at least, whatever the zoom. */
  rateWindow: '$__rate_interval',
} as const;

const { deployment: DEPLOYMENT, rateWindow: WINDOW } = DASHBOARD_VARIABLES;
/** Node.js's process CPU counter, which each API replica serves under its prefix (prom-client's default metrics). */
export const API_CPU_SECONDS = 'conveyor_api_process_cpu_seconds_total';
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** One query of a panel and how its series are named. */
export interface DashboardQuery {
  expr: string;
  legend: string;
}

/** A panel as declared here: its queries and the metrics they read. */
export interface DashboardPanel {
  title: string;
  description: string;
  unit: string;
  queries: DashboardQuery[];
  reads: MetricSpec[];
}

const selected = (spec: MetricSpec, suffix = '') =>
  `${spec.name}${suffix}${spec.labels.includes('model_name') ? `{model_name=~"${DEPLOYMENT}"}` : ''}`;
const rateOf = (spec: MetricSpec, by: string, suffix = '') =>
  `sum by (${by}) (rate(${selected(spec, suffix)}[${WINDOW}]))`;
const quantiles = (spec: MetricSpec): DashboardQuery[] =>
  [0.5, 0.95, 0.99].map((q) => ({
    expr: `histogram_quantile(${q}, sum by (le, model_name) (rate(${selected(spec, '_bucket')}[${WINDOW}])))`,
    legend: `p${Math.round(q * 100)} {{model_name}}`,
  }));
const latency = (title: string, description: string, spec: MetricSpec): DashboardPanel => ({
  title,
  description,
  unit: 's',
  queries: quantiles(spec),
  reads: [spec],
});

/** What a platform team looks at first, then where a request's time goes, then the fleet, two panels a row. */
export const DASHBOARD_PANELS: readonly DashboardPanel[] = [
  {
    title: 'Requests running and waiting',
    description: "Requests a worker generates for, and requests and batch lines queued for a deployment's workers.",
    unit: 'short',
    queries: [
      { expr: `sum by (model_name) (${selected(VLLM_REQUESTS_RUNNING)})`, legend: 'running {{model_name}}' },
      { expr: `sum by (model_name) (${selected(VLLM_REQUESTS_WAITING)})`, legend: 'waiting {{model_name}}' },
    ],
    reads: [VLLM_REQUESTS_RUNNING, VLLM_REQUESTS_WAITING],
  },
  {
    title: 'Requests finished',
    description: 'Requests and batch lines finished per second, by deployment; and HTTP answers per second, by status.',
    unit: 'reqps',
    queries: [
      { expr: rateOf(VLLM_E2E_LATENCY, 'model_name', '_count'), legend: '{{model_name}}' },
      { expr: rateOf(HTTP_REQUESTS, 'status'), legend: 'HTTP {{status}}' },
    ],
    reads: [VLLM_E2E_LATENCY, HTTP_REQUESTS],
  },
  latency(
    'Time to first token',
    'From accepting a request to its first token reaching the API: time queued, the prompt, the first step.',
    VLLM_TIME_TO_FIRST_TOKEN,
  ),
  latency('Time between tokens', 'Between two tokens of a reply, as its client gets them.', VLLM_INTER_TOKEN_LATENCY),
  latency('Request latency', 'A whole request, from accepting it to its last token.', VLLM_E2E_LATENCY),
  latency('Time queued', 'From enqueueing a request to a worker starting it.', VLLM_QUEUE_TIME),
  {
    title: 'Time queued by service tier',
    description:
      'p95 of the time a request waited for a worker, by deployment and the service tier (priority band) it was served at.',
    unit: 's',
    queries: [
      {
        expr: `histogram_quantile(0.95, sum by (le, deployment, tier) (rate(${QUEUE_WAIT.name}_bucket{deployment=~"${DEPLOYMENT}"}[${WINDOW}])))`,
        legend: '{{deployment}} {{tier}}',
      },
    ],
    reads: [QUEUE_WAIT],
  },
  {
    title: 'Tokens per second',
    description: 'Prompt tokens taken in and tokens generated, by deployment.',
    unit: 'short',
    queries: [
      { expr: rateOf(VLLM_PROMPT_TOKENS, 'model_name'), legend: 'prompt {{model_name}}' },
      { expr: rateOf(VLLM_GENERATION_TOKENS, 'model_name'), legend: 'generated {{model_name}}' },
    ],
    reads: [VLLM_PROMPT_TOKENS, VLLM_GENERATION_TOKENS],
  },
  {
    title: 'Prefix cache hit rate',
    description: "Of the prompt tokens looked up in a worker's prompt cache, the share it reused.",
    unit: 'percentunit',
    queries: [
      {
        expr: `${rateOf(VLLM_PREFIX_CACHE_HITS, 'model_name')} / ${rateOf(VLLM_PREFIX_CACHE_QUERIES, 'model_name')}`,
        legend: '{{model_name}}',
      },
    ],
    reads: [VLLM_PREFIX_CACHE_HITS, VLLM_PREFIX_CACHE_QUERIES],
  },
  {
    title: 'Queue jobs by state',
    description: "Jobs in each deployment's queue, by BullMQ's state.",
    unit: 'short',
    queries: [{ expr: `sum by (deployment, state) (${QUEUE_JOBS.name})`, legend: '{{deployment}} {{state}}' }],
    reads: [QUEUE_JOBS],
  },
  {
    title: 'Workers and sequences',
    description: 'Live workers by pool, and their sequences (parallel replies), busy or free.',
    unit: 'short',
    queries: [
      { expr: `sum by (pool) (${POOL_WORKERS.name})`, legend: 'workers {{pool}}' },
      { expr: `sum by (pool, state) (${SEQUENCES.name})`, legend: 'sequences {{pool}} {{state}}' },
    ],
    reads: [POOL_WORKERS, SEQUENCES],
  },
  {
    title: 'Batch lines by state',
    description: 'Lines of the batches still running, by state.',
    unit: 'short',
    queries: [{ expr: `sum by (state) (${BATCH_LINES.name})`, legend: '{{state}}' }],
    reads: [BATCH_LINES],
  },
  {
    title: 'Pending work by pool',
    description: "Jobs and batch lines each pool's deployments have not finished: the series autoscaling reads.",
    unit: 'short',
    queries: [{ expr: `sum by (pool) (${PENDING_WORK.name})`, legend: '{{pool}}' }],
    reads: [PENDING_WORK],
  },
  {
    title: 'API CPU per 1,000 tokens',
    description:
      "CPU seconds the API replicas spent per 1,000 tokens generated: the platform's own cost beside the engine's.",
    unit: 's',
    queries: [
      {
        expr: `1000 * sum(rate(${API_CPU_SECONDS}[${WINDOW}])) / sum(rate(${VLLM_GENERATION_TOKENS.name}[${WINDOW}]))`,
        legend: 'API CPU s / 1k tokens',
      },
    ],
    reads: [VLLM_GENERATION_TOKENS],
  },
  {
    title: 'Redis commands per 1,000 tokens',
    description:
      "Commands Redis processed per 1,000 tokens generated, whoever sent them (API, workers, BullMQ): the queue's cost beside the engine's. Every replica reports Redis's one count, so it is read once.",
    unit: 'short',
    queries: [
      {
        expr: `1000 * max(rate(${REDIS_COMMANDS.name}[${WINDOW}])) / sum(rate(${VLLM_GENERATION_TOKENS.name}[${WINDOW}]))`,
        legend: 'Redis commands / 1k tokens',
      },
    ],
    reads: [REDIS_COMMANDS, VLLM_GENERATION_TOKENS],
  },
  {
    title: 'Request duration by operation (OpenTelemetry GenAI)',
    description: "The GenAI semantic conventions' server request duration, p95 by operation.",
    unit: 's',
    queries: [
      {
        expr: `histogram_quantile(0.95, sum by (le, gen_ai_operation_name) (rate(${GEN_AI_REQUEST_DURATION.name}_bucket[${WINDOW}])))`,
        legend: '{{gen_ai_operation_name}}',
      },
    ],
    reads: [GEN_AI_REQUEST_DURATION],
  },
];

const PANEL_WIDTH = 12;
const PANEL_HEIGHT = 8;

function panel(spec: DashboardPanel, index: number): Panel {
  return {
    id: index + 1,
    type: 'timeseries',
    title: spec.title,
    description: spec.description,
    datasource: DATASOURCE,
    gridPos: {
      x: (index % 2) * PANEL_WIDTH,
      y: Math.floor(index / 2) * PANEL_HEIGHT,
      w: PANEL_WIDTH,
      h: PANEL_HEIGHT,
    },
    fieldConfig: { defaults: { unit: spec.unit }, overrides: [] },
    options: { legend: { displayMode: 'list', placement: 'bottom', showLegend: true } },
    targets: spec.queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr: q.expr,
      legendFormat: q.legend,
    })),
  };
}

const VARIABLES: VariableModel[] = [
  {
    type: 'datasource',
    name: 'datasource',
    label: 'Prometheus',
    query: 'prometheus',
  },
  {
    type: 'query',
    name: 'model_name',
    label: 'Deployment',
    datasource: DATASOURCE,
    query: `label_values(${VLLM_REQUESTS_WAITING.name}, model_name)`,
    multi: true,
    includeAll: true,
    allValue: '.*',
    refresh: 2,
  },
];

/** The dashboard, as Grafana imports it. */
export function conveyorDashboard(): Dashboard {
  return {
    uid: 'conveyor-fleet',
    title: 'Conveyor fleet',
    description: 'Requests, latency, tokens, prompt reuse, queues and workers of a Conveyor fleet.',
    tags: ['conveyor', 'vllm', 'llm'],
    schemaVersion: 39,
    editable: true,
    refresh: '30s',
    time: { from: 'now-1h', to: 'now' },
    templating: { list: VARIABLES },
    panels: DASHBOARD_PANELS.map(panel),
  };
}
