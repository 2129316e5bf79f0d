import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Registry } from 'prom-client';
import { metricSections } from './catalog.js';
import { counterOf, gaugeOf, histogramOf, type MetricSpec } from './metric-spec.js';
import { renderMetricsPage } from './metrics-page.js';
import { differingLines } from '../../../test/support/differing-lines.js';

const PAGE = resolve(import.meta.dirname, '../../../docs/metrics.md');

const all = (): MetricSpec[] => metricSections().flatMap((s) => s.metrics);

describe('docs/metrics.md', () => {
  it('is what the metric declarations generate (npm run docs:metrics rewrites it)', async () => {
    const generated = await renderMetricsPage(PAGE);
    expect(differingLines(readFileSync(PAGE, 'utf8'), generated)).toEqual([]);
  });

  it('has one row per declared metric, with its type, labels and meaning', async () => {
    const page = await renderMetricsPage(PAGE);
    // Prettier pads a table's cells to align them; compared without the padding.
    const rows = page
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.replace(/ {2,}/g, ' '));
    expect(rows.map((row) => /^\| `([^`]+)`/.exec(row)?.[1])).toEqual(all().map((m) => m.name));
    expect(rows).toContain(
      "| `vllm:num_requests_waiting` | gauge | `model_name` | Requests and batch lines queued for a deployment's workers and not started. |",
    );
    expect(rows.join('\n')).toMatch(
      /\| `vllm:time_to_first_token_seconds` \| histogram \| `model_name` \| .*Buckets: 0\.001, /,
    );
  });
});

describe('the metric declarations', () => {
  it('name each metric once, and each builds a prom-client metric of its type', () => {
    const specs = all();
    expect(new Set(specs.map((m) => m.name)).size).toBe(specs.length);
    const registry = new Registry();
    for (const spec of specs) {
      if (spec.kind === 'counter') counterOf({ ...spec, kind: 'counter' }, registry);
      else if (spec.kind === 'gauge') gaugeOf({ ...spec, kind: 'gauge' }, registry);
      else histogramOf({ ...spec, kind: 'histogram' }, registry);
    }
    expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual(specs.map((m) => m.name));
  });

  it('give every histogram rising buckets from a millisecond-scale bound to minutes', () => {
    for (const spec of all().filter((m) => m.kind === 'histogram' && m.name.endsWith('_seconds'))) {
      const b = spec.buckets ?? [];
      expect(b.every((v, i) => i === 0 || v > b[i - 1]!)).toBe(true);
      expect(b[0]).toBeLessThanOrEqual(0.01);
      expect(b[b.length - 1]).toBeGreaterThanOrEqual(60);
    }
  });
});
