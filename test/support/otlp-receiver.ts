import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readBody } from './read-body.ts';
import type { Untyped } from './untyped.ts';

/** One span as an OTLP/HTTP JSON export carries it, with its resource's `service.name`. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startNs: bigint;
  endNs: bigint;
}

/** A loopback OTLP/HTTP collector for traces in JSON (`POST /v1/traces`), as an exporter configured by OTEL_EXPORTER_OTLP_ENDPOINT sends them. */
export interface OtlpReceiver {
  /** The base URL to set as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body received, as text: what a secret must never be found in. */
  bodies: string[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

function valueOf(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return JSON.stringify(value);
}

function attributesOf(list: { key: string; value: AnyValue }[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const receive = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const text = await readBody(req);
    // JSON, uncompressed: what the gateway's exporter sends unless OTEL_EXPORTER_OTLP_COMPRESSION says otherwise.
    if (!String(req.headers['content-type']).includes('application/json') || req.headers['content-encoding']) {
      res.writeHead(415).end();
      return;
    }
    bodies.push(text);
    const body = JSON.parse(text) as { resourceSpans?: Untyped[] };
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            statusCode: span.status?.code ?? 0,
            startNs: BigInt(span.startTimeUnixNano),
            endNs: BigInt(span.endTimeUnixNano),
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  const server: Server = createServer((req, res) => void receive(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
