/**
 * `GET /metrics` on a listener of its own (AMY_METRICS_HOST:AMY_METRICS_PORT), apart from the API's
 * public port: what Prometheus scrapes is for the operators' network, never for the API's clients, and
 * needs no API key. Anything else on it is a 404.
 */
import http from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from './logger';

export interface MetricsEndpoint {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsEndpoint(opts: {
  host: string;
  port: number;
  registry: Registry;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Brings collectors that are read rather than recorded up to date before a scrape (Temporal's). */
  beforeScrape?: () => void;
}): Promise<MetricsEndpoint> {
  const { registry, logger } = opts;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('Not found: metrics are at GET /metrics\n');
      return;
    }
    opts.beforeScrape?.();
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(req.method === 'HEAD' ? '' : text),
      (err: unknown) => {
        logger.warn('metrics could not be collected', { error: String(err) });
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('metrics could not be collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/metrics`;
  logger.info('metrics listening', { url });
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
