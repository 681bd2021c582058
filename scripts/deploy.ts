/**
 * The release commands of a versioned deployment (docs/operations.md#deploying), for the deployment
 * AMY_DEPLOYMENT_NAME on TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE:
 *
 *   npm run deploy:promote -- <build id> [--wait-seconds N]
 *     makes that release's version current: every turn started from then on is pinned to it, turns
 *     already running finish on the version that started them. Waits (60 s by default) for the
 *     release's workers to have polled, as Temporal refuses a version none of whose workers it has seen.
 *   npm run deploy:status
 *     every version of the deployment: its status (current, ramping, draining, drained, inactive) and
 *     the workflows (turns) still open on it. A version's workers can be stopped once it is drained, or has none.
 *
 * Exit 0: done; 1: refused or failed (the reason is printed).
 */
import { Client, Connection } from '@temporalio/client';
import { hostname } from 'node:os';
import { loadDeploymentConfig } from '../platform/config';
import { countOpenPinnedWorkflows, describeDeployment, promoteVersion } from '../platform/temporal/worker-deployments';
import { CliError, failCommand } from './cli-env';

const USAGE = 'usage: npm run deploy:promote -- <build id> [--wait-seconds N] | npm run deploy:status';

function parseArgs(
  argv: string[],
): { command: 'promote'; buildId: string; waitSeconds: number } | { command: 'status' } {
  const [command, ...rest] = argv;
  if (command === 'status' && rest.length === 0) return { command };
  if (command !== 'promote') throw new CliError(USAGE);
  let buildId: string | undefined;
  let waitSeconds = 60;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--wait-seconds') {
      waitSeconds = Number(rest[++i]);
      if (!Number.isInteger(waitSeconds) || waitSeconds < 0) throw new CliError('--wait-seconds takes a whole number');
    } else if (buildId === undefined && !rest[i].startsWith('-')) buildId = rest[i];
    else throw new CliError(USAGE);
  }
  if (!buildId) throw new CliError(USAGE);
  return { command, buildId, waitSeconds };
}

async function run() {
  const args = parseArgs(process.argv.slice(2));
  const config = loadDeploymentConfig();
  const deploymentName = config.AMY_DEPLOYMENT_NAME;
  if (!deploymentName) throw new CliError('set AMY_DEPLOYMENT_NAME to the deployment the workers poll as');
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
    if (args.command === 'promote') {
      const { previousBuildId } = await promoteVersion(
        client,
        { deploymentName, buildId: args.buildId },
        {
          identity: `amy deploy:promote (${process.env.USER ?? 'unknown'}@${hostname()})`,
          waitMs: args.waitSeconds * 1000,
        },
      );
      console.log(
        `${deploymentName}.${args.buildId} is current (was ${previousBuildId ? `${deploymentName}.${previousBuildId}` : 'the unversioned workers'}): new turns start on it; running turns finish where they started.`,
      );
      return;
    }
    const deployment = await describeDeployment(client, deploymentName);
    if (!deployment) throw new CliError(`no deployment ${deploymentName}: no worker has polled as one of its versions`);
    console.log(
      `deployment ${deploymentName}: current ${deployment.currentBuildId ?? '(unversioned workers)'}, ramping ${deployment.rampingBuildId ?? 'none'}`,
    );
    for (const version of deployment.versions) {
      const pinned = await countOpenPinnedWorkflows(client, { deploymentName, buildId: version.buildId });
      console.log(`  ${version.buildId}  ${version.status}  open workflows pinned: ${pinned}`);
    }
  } finally {
    await connection.close();
  }
}

run().catch((err) => failCommand(err));
