import OpenAI from 'openai';
import { DASHBOARD_PANELS, DASHBOARD_VARIABLES } from '@conveyor/metrics';
import { TestPlatform } from './support/platform.js';
import { TestPrometheus, prometheusPath } from './support/prometheus.js';

const binary = prometheusPath();
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
  });
});
