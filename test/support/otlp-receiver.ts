import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP/JSON attribute value, as the exporter writes it. */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: AnyValue[] };
}

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  events: string[];
  links: Array<{ traceId: string; spanId: string }>;
}

const valueOf = (v: AnyValue): unknown =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.boolValue ??
  v.arrayValue?.values.map(valueOf);

const attributesOf = (list: Array<{ key: string; value: AnyValue }> = []): Record<string, unknown> =>
  Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/**
 * A collector on loopback taking OTLP/HTTP in its JSON encoding (`POST /v1/traces`), as an
 * OpenTelemetry collector would, and keeping every span, and every body as it came, for the test.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly bodies: string[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        const body = Buffer.concat(chunks).toString('utf8');
        receiver.bodies.push(body);
        receiver.take(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private take(body: string): void {
    const parsed = JSON.parse(body) as {
      resourceSpans: Array<{
        resource: { attributes: Array<{ key: string; value: AnyValue }> };
        scopeSpans: Array<{ spans: Array<Record<string, unknown>> }>;
      }>;
    };
    for (const rs of parsed.resourceSpans) {
      const service = String(attributesOf(rs.resource.attributes)['service.name']);
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans)
          this.spans.push({
            service,
            traceId: s.traceId as string,
            spanId: s.spanId as string,
            parentSpanId: (s.parentSpanId as string | undefined) ?? '',
            name: s.name as string,
            kind: s.kind as number,
            attributes: attributesOf(s.attributes as Array<{ key: string; value: AnyValue }>),
            events: ((s.events as Array<{ name: string }> | undefined) ?? []).map((e) => e.name),
            links: (s.links as Array<{ traceId: string; spanId: string }> | undefined) ?? [],
          });
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
