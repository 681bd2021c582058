/**
 * A deliberately thin HTTP client for the benchmarks: raw `http.request` on keep-alive agents and a
 * small SSE parser (bytes → lines → events), so that ten thousand open streams cost the client little
 * and the client's own overhead stays out of the latencies it measures.
 */
import http from 'node:http';
import { nowMs } from './stats';

export interface SseMessage {
  id: number;
  type: string;
  data: string;
}

/**
 * Incremental SSE framing for what the API sends (`id`, `event`, one `data` line, blank line). Holds
 * the unfinished tail of the last chunk, since TCP may split an event anywhere.
 */
class SseParser {
  private buffer = '';
  private pending: Partial<SseMessage> = {};

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const messages: SseMessage[] = [];
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) !== -1) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      if (line === '') {
        if (this.pending.data !== undefined) {
          messages.push({ id: this.pending.id ?? 0, type: this.pending.type ?? 'message', data: this.pending.data });
        }
        this.pending = {};
        continue;
      }
      const colon = line.indexOf(':');
      if (colon === 0) continue; // a comment line
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') this.pending.id = Number(value);
      else if (field === 'event') this.pending.type = value;
      else if (field === 'data')
        this.pending.data = this.pending.data === undefined ? value : `${this.pending.data}\n${value}`;
    }
    return messages;
  }
}

/** One agent per role with no socket cap: SSE streams hold their socket for as long as they are open. */
export const newAgent = () => new http.Agent({ keepAlive: true, maxSockets: Infinity });

export async function postJson(
  url: string,
  body: unknown,
  opts: { apiKey: string; agent: http.Agent },
): Promise<{ status: number; body: unknown }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: opts.agent,
        headers: {
          authorization: `Bearer ${opts.apiKey}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export interface SseStream {
  /** Resolves when the server ends the stream (after a terminal event) or the connection drops. */
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens `GET url` as an event stream; resolves once the 200 response headers are in, i.e. once the
 * server has registered the subscription. `onMessage` gets each event with the time it was parsed.
 */
export function openSse(
  url: string,
  opts: { apiKey: string; agent: http.Agent; onMessage?: (message: SseMessage, receivedAtMs: number) => void },
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      agent: opts.agent,
      headers: { authorization: `Bearer ${opts.apiKey}`, accept: 'text/event-stream' },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${url} answered ${res.statusCode}`));
        return;
      }
      const parser = new SseParser();
      const onMessage = opts.onMessage;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const receivedAt = nowMs();
        for (const message of parser.push(chunk)) onMessage?.(message, receivedAt);
      });
      const ended = new Promise<void>((done) => {
        res.on('end', done);
        res.on('close', done);
      });
      // After the headers, a dropped connection only ends the stream; measurements check completeness.
      req.off('error', reject);
      req.on('error', () => undefined);
      resolve({ ended, close: () => req.destroy() });
    });
    req.end();
  });
}
