/**
 * The scripted model in a process of its own, for `npm run load`, with every request timed where the
 * model serves it. Run as a child (`node --import tsx bench/model-process.ts`); it prints one JSON
 * line `{"url": …}` on stdout once listening.
 *
 * Why a process of its own: in the load generator's process the model would share an event loop with
 * hundreds of SSE clients, and the client's lag would be counted (and then subtracted) as model time.
 *
 * Why the timing wrapper: the scripted model's own request log records when a request arrived, not when
 * its answer was done, and nothing ties it to a turn. So each request is timed from the server's
 * `request` event to the response's `finish` (last byte handed to the socket), keyed by the
 * `request-id` header the server sets on every answer. The worker's LLM layer stores that id in
 * `llm_calls.request_id` with the turn id, which is how the load script charges each call to its turn.
 * `GET /_bench/model-timings` returns the timings (durations only; no clock is shared with the caller).
 */
import http from 'node:http';
import { realisticPacing, type PacingOverrides } from '../scripted-model/pacing';
import { startScriptedModelServer } from '../scripted-model/server';

import { MODEL_TIMINGS_PATH, type ModelCallTiming } from './load-processes';

const timings: ModelCallTiming[] = [];
const now = () => performance.timeOrigin + performance.now();

// Wrap the listener the scripted server registers; its module calls `http.createServer` at start-up, after
// this assignment, so it picks up the wrapper. Nothing else in this process creates servers.
const createServer = http.createServer.bind(http) as (listener: http.RequestListener) => http.Server;
(http as { createServer: unknown }).createServer = (listener: http.RequestListener) =>
  createServer((req, res) => {
    if (req.url === MODEL_TIMINGS_PATH) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(timings));
      return;
    }
    const startMs = now();
    res.on('finish', () => {
      const requestId = res.getHeader('request-id');
      if (typeof requestId === 'string') timings.push({ requestId, startMs, durationMs: now() - startMs });
    });
    listener(req, res);
  });

async function main(): Promise<void> {
  const chunkDelayMs = Number(process.env.LOAD_MODEL_CHUNK_DELAY_MS ?? 0);
  // Realistic pacing with these overrides (JSON), or none when unset.
  const pacing = process.env.LOAD_MODEL_PACING
    ? realisticPacing(JSON.parse(process.env.LOAD_MODEL_PACING) as PacingOverrides)
    : undefined;
  const server = await startScriptedModelServer({
    port: 0,
    streamChunkDelayMs: chunkDelayMs,
    ...(pacing ? { pacing } : {}),
  });
  console.log(JSON.stringify({ url: server.url }));
  const stop = () => void server.close().finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
