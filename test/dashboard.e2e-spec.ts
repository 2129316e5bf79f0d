import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import { parseAllDocuments } from 'yaml';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1';
import { DASHBOARD_PANELS, DASHBOARD_VARIABLES } from '@conveyor/metrics';
import { TestPlatform } from './support/platform.js';
import { TestPrometheus, prometheusPath } from './support/prometheus.js';

const binary = prometheusPath();

/** The KEDA alternative that scales pools on the same series, from Prometheus (infra/prometheus/). */
const kedaObjects = parseAllDocuments(
  readFileSync(resolve(import.meta.dirname, '../infra/prometheus/keda-prometheus.yaml'), 'utf8'),
).map((d) => d.toJS() as { metadata: { name: string }; spec: { triggers: { metadata: { query: string } }[] } });
const describeWith = binary ? describe : describe.skip;

/** A panel's query as Prometheus runs it: Grafana's variables given the values a viewer would pick. */
const runnable = (expr: string) =>
  expr.replaceAll(DASHBOARD_VARIABLES.deployment, '.*').replaceAll(DASHBOARD_VARIABLES.rateWindow, '1m');

describeWith('the Grafana dashboard against a real Prometheus scraping a platform', () => {
  let platform: TestPlatform;
  let prometheus: TestPrometheus;

  beforeAll(async () => {
    platform = await TestPlatform.start({ workers: 1 });
    prometheus = await TestPrometheus.start(binary!, [new URL(platform.baseUrl).host]);
  });

  afterAll(async () => {
    await prometheus?.stop();
    await platform?.stop();
  });

  it('answers every query of every panel with data once the platform has served some traffic', async () => {
    // A scrape before the traffic, so that counters and histograms have a rise for rate() to see.
    await prometheus.scrapedSince(Date.now());
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    const shared = 'You are a terse assistant who answers in one short sentence. '.repeat(12);
    for (let i = 0; i < 4; i++) {
      const messages = [
        { role: 'system' as const, content: shared },
        { role: 'user' as const, content: `Question ${i}?` },
      ];
      await client.chat.completions.create({ model: 'conveyor-tiny', messages, max_tokens: 8 });
      const stream = await client.chat.completions.create({
        model: 'conveyor-tiny',
        messages,
        max_tokens: 8,
        stream: true,
      });
      for await (const _chunk of stream);
    }
    // Two scrapes after it: rate() over the window sees the rise.
    await prometheus.scrapedSince(Date.now());
    await prometheus.scrapedSince(Date.now());

    const empty: string[] = [];
    for (const panel of DASHBOARD_PANELS) {
      for (const query of panel.queries) {
        const series = await prometheus.query(runnable(query.expr));
        if (!series.length) empty.push(`${panel.title}: ${query.expr}`);
      }
    }
    expect(empty).toEqual([]);

    // KEDA's Prometheus triggers read the same gauge: each query parses, and the pool served here has data.
    for (const object of kedaObjects) {
      expect(() =>
        new ScaledObject(object as unknown as ConstructorParameters<typeof ScaledObject>[0]).validate(),
      ).not.toThrow();
      for (const { metadata } of object.spec.triggers) {
        const series = await prometheus.query(metadata.query);
        if (object.metadata.name === 'conveyor-worker-cpu') expect(series.length).toBeGreaterThan(0);
      }
    }
  });
});
