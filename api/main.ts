import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { startTracing } from '../platform/tracing';
import { startApiServer } from './server';

async function run() {
  const config = loadConfig();
  const logger = createLogger('api', config.LOG_LEVEL);
  // Before the server: its Temporal client is made with tracing's interceptors, or without.
  const tracing = startTracing({ defaultServiceName: 'amy-api', logger });
  const api = await startApiServer(config, logger);
  const shutdown = () => {
    api
      .close()
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

run().catch((err: unknown) => {
  createLogger('api').error('api failed', { error: err });
  process.exit(1);
});
