/**
 * What a stand-in for an outside service can be told to do instead of answering, so tests can drive the
 * network tools through every failure they handle: a slow answer, a 429 with Retry-After, a 500, a body
 * that is not JSON. A knob stays set until cleared; `times` makes it apply to the next n requests only.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type StandInFault =
  | { kind: 'rate_limited'; retryAfterSeconds?: number }
  | { kind: 'server_error'; status?: number }
  | { kind: 'malformed' };

interface StandInKnobs {
  /** Milliseconds to wait before answering (or failing). */
  delayMs: number;
  fault: StandInFault | null;
  /** How many more requests the fault applies to; null: until cleared. */
  times: number | null;
}

export interface StandInServer {
  url: string;
  knobs: StandInKnobs;
  /** Sets a fault, for the next `times` requests or until cleared. */
  fail(fault: StandInFault, times?: number): void;
  /** Back to answering normally and at once. */
  reset(): void;
  /** Every request's URL (path and query), oldest first. */
  requests: URL[];
  close(): Promise<void>;
}

export type StandInRoute = (url: URL) => { status: number; body: unknown };

const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  res.end(JSON.stringify(body));
};

export async function startStandIn(
  route: StandInRoute,
  options: { port?: number; host?: string } = {},
): Promise<StandInServer> {
  const knobs: StandInKnobs = { delayMs: 0, fault: null, times: null };
  const requests: URL[] = [];

  const takeFault = (): StandInFault | null => {
    if (knobs.fault === null) return null;
    const fault = knobs.fault;
    if (knobs.times !== null && --knobs.times <= 0) {
      knobs.fault = null;
      knobs.times = null;
    }
    return fault;
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    requests.push(url);
    const fault = takeFault();
    const answer = () => {
      if (fault?.kind === 'rate_limited') {
        const headers: Record<string, string> =
          fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
        return sendJson(res, 429, { error: 'API rate limit exceeded' }, headers);
      }
      if (fault?.kind === 'server_error') return sendJson(res, fault.status ?? 500, { error: 'internal error' });
      if (fault?.kind === 'malformed') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"result": {"uids": [');
      }
      const { status, body } = route(url);
      sendJson(res, status, body);
    };
    if (knobs.delayMs > 0) setTimeout(answer, knobs.delayMs);
    else answer();
  };

  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    knobs,
    requests,
    fail(fault, times) {
      knobs.fault = fault;
      knobs.times = times ?? null;
    },
    reset() {
      knobs.delayMs = 0;
      knobs.fault = null;
      knobs.times = null;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
