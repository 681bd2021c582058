/**
 * A TCP proxy that breaks connections on purpose, for testing clients against the real API: an
 * answer is cut after a number of bytes the test chooses (mid-header, mid-frame, mid-UTF-8
 * character), or just before a marker such as `event: turn.completed`. A cut destroys both sides
 * of the connection, as a dying proxy or a lost network would.
 *
 * Clients keep connections alive across requests, so the policy is asked once per request (an
 * exchange), seen as a request line arriving from the client, not once per TCP connection.
 */
import net from 'node:net';

interface ChaosExchange {
  /** 1 for the first request through the proxy. */
  index: number;
  /** The request line, e.g. `GET /v1/turns/turn_…/events HTTP/1.1`. */
  requestLine: string;
}

export interface ChaosPolicy {
  /** Bytes of this exchange's answer to forward before cutting; null forwards all of it. */
  cutAfterBytes(exchange: ChaosExchange): number | null;
  /** Asked as the answer flows: cut just before this text if it appears. */
  cutBefore?(exchange: ChaosExchange): string | null;
}

export interface ChaosProxy {
  url: string;
  /** Connections cut so far. */
  cuts(): number;
  exchanges(): number;
  setPolicy(policy: ChaosPolicy): void;
  close(): Promise<void>;
}

export const passThrough: ChaosPolicy = { cutAfterBytes: () => null };

const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+ HTTP\/1\.[01]/;

export async function startChaosProxy(target: string, initial: ChaosPolicy = passThrough): Promise<ChaosProxy> {
  const { hostname, port } = new URL(target);
  let policy = initial;
  let cuts = 0;
  let exchanges = 0;
  const open = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    let exchange: ChaosExchange | null = null;
    let budget: number | null = null;
    let forwarded = 0;
    let tail = '';

    client.on('data', (chunk: Buffer) => {
      const head = chunk.subarray(0, 200).toString('latin1');
      const line = REQUEST_LINE.exec(head);
      if (line) {
        exchange = { index: ++exchanges, requestLine: head.slice(0, head.indexOf('\r\n')) };
        budget = policy.cutAfterBytes(exchange);
        forwarded = 0;
        tail = '';
      }
      upstream.write(chunk);
    });

    const cut = (last: Buffer) => {
      cuts++;
      if (last.length > 0) client.write(last);
      upstream.pause();
      // Let the last bytes leave, then drop both sides as a broken network would.
      setImmediate(() => {
        client.destroy();
        upstream.destroy();
      });
    };

    upstream.on('data', (chunk: Buffer) => {
      if (client.destroyed || upstream.isPaused()) return;
      if (exchange && budget !== null && forwarded + chunk.length >= budget) {
        return cut(chunk.subarray(0, budget - forwarded));
      }
      const marker = exchange ? (policy.cutBefore?.(exchange) ?? null) : null;
      if (marker) {
        const text = tail + chunk.toString('latin1');
        const at = text.indexOf(marker);
        if (at !== -1) return cut(chunk.subarray(0, Math.max(0, at - tail.length)));
        tail = text.slice(-marker.length);
      }
      forwarded += chunk.length;
      client.write(chunk);
    });
    upstream.on('end', () => client.end());
    client.on('end', () => upstream.end());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    cuts: () => cuts,
    exchanges: () => exchanges,
    setPolicy: (next) => void (policy = next),
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
