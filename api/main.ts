import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { startTracing } from '../platform/tracing';
import { shutdownSignal } from '../platform/shutdown-signal';
import { startApiServer } from './server';

async function run() {
  const config = loadConfig();
  const logger = createLogger('api', config.LOG_LEVEL);
  // Listened for before start-up, so that a stop during it still drains (at once) rather than kills.
  const stop = shutdownSignal(logger);
  // Before the server: its Temporal client is made with tracing's interceptors, or without.
  const tracing = startTracing({ defaultServiceName: 'amy-api', logger });
  const api = await startApiServer(config, logger);
  const drain = () => {
    api
      .drain(config.AMY_SHUTDOWN_GRACE_SECONDS * 1000)
      // What the last requests traced is still batched.
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error('api drain failed', { error: err });
          process.exit(1);
        },
      );
  };
  if (stop.aborted) drain();
  else stop.addEventListener('abort', drain, { once: true });
}

run().catch((err: unknown) => {
  createLogger('api').error('api failed', { error: err });
  process.exit(1);
});
