import { loadConfig } from '../platform/config';
import { startApiServer } from './server';

async function run() {
  const api = await startApiServer(loadConfig());
  const shutdown = () => {
    api.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
