/**
 * A webhook receiver for the suites: a local HTTP server recording every request (path, headers, raw body), and
 * answering each path as a suite tells it (a status, a status for the first n requests, a redirect, or holding the
 * request open until released).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
}

type Answer = { status: number; headers?: Record<string, string>; body?: string } | { hold: true };

export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** How `path` answers from now on: `answers` in turn, the last one for every request after them. */
  answer(path: string, ...answers: Answer[]): void;
  /** Requests to `path` so far. */
  at(path: string): ReceivedWebhook[];
  /** Resolves once `path` has received `count` requests (polling; the suite's own timeout bounds it). */
  waitFor(path: string, count: number): Promise<ReceivedWebhook[]>;
  /** Answers every held request with `status`. */
  release(status?: number): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const plans = new Map<string, Answer[]>();
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
      );
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8') });
      const plan = plans.get(path) ?? [{ status: 200 }];
      const answer = plan.length > 1 ? plan.shift()! : plan[0];
      if ('hold' in answer) {
        held.push(res);
        return;
      }
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const at = (path: string) => received.filter((r) => r.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    answer: (path, ...answers) => void plans.set(path, answers),
    at,
    async waitFor(path, count) {
      while (at(path).length < count) await new Promise((resolve) => setTimeout(resolve, 100));
      return at(path);
    },
    release(status = 200) {
      for (const res of held.splice(0)) {
        if (!res.destroyed) res.writeHead(status).end();
      }
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
