import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { metricSections } from './catalog.js';
import { renderDashboard } from './dashboard-file.js';
import { API_CPU_SECONDS, DASHBOARD_PANELS, conveyorDashboard } from './grafana-dashboard.js';

const FILE = resolve(import.meta.dirname, '../../../infra/grafana/conveyor-fleet.json');

/** Every series name the declarations serve: a histogram's as Prometheus exposes it too. */
function servedNames(): Set<string> {
  // Node.js's process metrics are served beside the declared ones (prom-client's defaults).
  const names = new Set<string>([API_CPU_SECONDS]);
  for (const spec of metricSections().flatMap((s) => s.metrics)) {
    names.add(spec.name);
    if (spec.kind === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${spec.name}${suffix}`);
  }
  return names;
}

/** The metric names a PromQL expression reads: identifiers followed by a selector, a range or a closing paren. */
function namesIn(expr: string): string[] {
  const withoutLabels = expr
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/"[^"]*"/g, '""')
    .replace(/\b(by|without)\s*\([^)]*\)/g, '');
  return [...withoutLabels.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?=[{[)])/g)]
    .map((m) => m[1]!)
    .filter((name) => !/^(sum|rate|histogram_quantile)$/.test(name));
}

describe('the Grafana dashboard (infra/grafana/conveyor-fleet.json)', () => {
  it('is what the metric declarations generate (npm run dashboard rewrites it)', async () => {
    expect(readFileSync(FILE, 'utf8')).toBe(await renderDashboard(FILE));
  });

  it('queries only metrics the platform declares, and each panel the metrics it says it reads', () => {
    const served = servedNames();
    for (const panel of DASHBOARD_PANELS) {
      const read = panel.queries.flatMap((q) => namesIn(q.expr));
      expect(read.length).toBeGreaterThan(0);
      expect({ panel: panel.title, undeclared: read.filter((name) => !served.has(name)) }).toEqual({
        panel: panel.title,
        undeclared: [],
      });
      for (const spec of panel.reads) expect(read.some((name) => name.startsWith(spec.name))).toBe(true);
    }
  });

  it('lays its panels out without overlap, each with a query, a unit and an id of its own', () => {
    const panels = conveyorDashboard().panels ?? [];
    expect(panels).toHaveLength(DASHBOARD_PANELS.length);
    const cells = new Set<string>();
    for (const p of panels) {
      const { x, y } = p.gridPos!;
      expect(cells.has(`${x},${y}`)).toBe(false);
      cells.add(`${x},${y}`);
    }
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
  });
});
