import { loadConfig } from '../platform/config';
import { createLogger } from '../platform/logger';
import { startApiServer } from './server';

async function run() {
  const config = loadConfig();
  const api = await startApiServer(config, createLogger('api', config.LOG_LEVEL));
  const shutdown = () => {
    api.close().then(
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
