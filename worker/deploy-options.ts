/**
 * The worker's part in a deploy (docs/operations.md#deploying):
 *
 * - **Its version.** With AMY_DEPLOYMENT_NAME and AMY_BUILD_ID it polls as the Worker Deployment
 *   version `<name>.<build id>`, and every turn it starts is pinned to that version: the turn's
 *   workflow tasks go to that version's workers alone until it ends, so a release whose workflow code
 *   would not replay a running turn's history never sees that turn.
 * - **How long a stop waits.** Told to stop, the worker stops polling at once and lets its running
 *   activities finish for AMY_SHUTDOWN_GRACE_SECONDS. Past that, they are cancelled (a model call
 *   aborted, a sandbox run killed) and fail as attempts, which Temporal retries on another worker.
 *   HANDBACK_MS later a worker still not done gives up and exits non-zero.
 */
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from '../platform/config';

/** How long cancelled activities get to report back before the worker stops waiting for them. */
export const HANDBACK_MS = 10_000;

export type DeployOptions = Pick<WorkerOptions, 'workerDeploymentOptions' | 'shutdownGraceTime' | 'shutdownForceTime'>;

export function deployOptions(
  config: Pick<Config, 'AMY_SHUTDOWN_GRACE_SECONDS' | 'AMY_DEPLOYMENT_NAME' | 'AMY_BUILD_ID'>,
): DeployOptions {
  const graceMs = config.AMY_SHUTDOWN_GRACE_SECONDS * 1000;
  const { AMY_DEPLOYMENT_NAME: deploymentName, AMY_BUILD_ID: buildId } = config;
  return {
    shutdownGraceTime: graceMs,
    shutdownForceTime: graceMs + HANDBACK_MS,
    ...(deploymentName && buildId
      ? {
          workerDeploymentOptions: {
            useWorkerVersioning: true,
            version: { deploymentName, buildId },
            // A turn is one workflow run of minutes: it finishes on the code that started it.
            defaultVersioningBehavior: 'PINNED',
          },
        }
      : {}),
  };
}
