import { format, resolveConfig } from 'prettier';
import { metricSections, type MetricSection } from './catalog.js';
import type { MetricSpec } from './metric-spec.js';

const INTRO = `# Metrics

<!-- Generated from libs/metrics/src by npm run docs:metrics: edit the declarations there, not this page. -->

Every metric the API and the workers serve, in Prometheus's text format. Keep \`/metrics\` on your
internal network: it names the deployments and their traffic. A histogram's buckets are its upper
bounds; they span a small model on a CPU and a GPU fleet alike.

A Grafana dashboard of the fleet, [\`infra/grafana/conveyor-fleet.json\`](../infra/grafana/conveyor-fleet.json),
is generated from the same declarations (\`npm run dashboard\`): import it and pick the Prometheus data
source that scrapes the API. Its panels read vLLM's names, so a dashboard written for vLLM reads a
deployment too. A test runs every panel's query against a real Prometheus scraping a platform.`;

const code = (text: string): string => `\`${text}\``;
const cell = (text: string): string => text.replace(/\|/g, '\\|');

function row(m: MetricSpec): string {
  const labels = m.labels.length ? m.labels.map(code).join(', ') : 'none';
  const help = m.help.replace(/\.$/, '');
  const meaning = m.buckets ? `${help}. Buckets: ${m.buckets.join(', ')}.` : `${help}.`;
  return `| ${[code(m.name), m.kind, labels, meaning].map(cell).join(' | ')} |`;
}

function sectionMarkdown({ title, about, metrics }: MetricSection): string {
  const table = ['| Metric | Type | Labels | Meaning |', '| --- | --- | --- | --- |', ...metrics.map(row)].join('\n');
  return [`## ${title}`, about, table].join('\n\n');
}

/**
 * docs/metrics.md: the declarations of every metric, one table per place they are served, formatted by
 * prettier with the options it has for `path`, so the committed page passes the format check as generated.
 */
export async function renderMetricsPage(path: string): Promise<string> {
  const markdown = [INTRO, ...metricSections().map(sectionMarkdown)].join('\n\n');
  return format(markdown, { ...(await resolveConfig(path)), filepath: path, parser: 'markdown' });
}
