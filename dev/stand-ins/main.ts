/**
 * `npm run stand-ins`: local stand-ins for NCBI E-utilities and Data Commons (./eutils.ts, ./data-commons.ts), so that
 * `npm start` can show the Domain Expert's network tools without the internet. Start the stack with
 *   AMY_DE_NETWORK_TOOLS=true NCBI_EMAIL=you@example.org NCBI_EUTILS_URL=<the URL printed> \
 *   DATA_COMMONS_URL=<the URL printed> DATA_COMMONS_API_KEY=local npm start
 * Their articles and figures are invented (PMIDs from 99000001, above any real one), never to be cited as real.
 */
import { startDataCommonsStandIn } from './data-commons';
import { startEutilsStandIn } from './eutils';

async function main() {
  const port = Number(process.env.STAND_IN_PORT ?? 8390);
  const [eutils, dataCommons] = await Promise.all([
    startEutilsStandIn({ port, host: '127.0.0.1' }),
    startDataCommonsStandIn({ port: port + 1, host: '127.0.0.1' }),
  ]);
  console.log(`E-utilities stand-in: NCBI_EUTILS_URL=${eutils.url}`);
  console.log(`Data Commons stand-in: DATA_COMMONS_URL=${dataCommons.url}`);
  const stop = () => void Promise.all([eutils.close(), dataCommons.close()]).then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
