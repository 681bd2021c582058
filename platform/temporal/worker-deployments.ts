/**
 * Temporal Worker Deployments (Worker Versioning), as a release uses them (docs/operations.md#deploying):
 * every worker of a release polls as one version, `<deployment name>.<build id>`; a turn is pinned to the
 * version that started it and runs to its end on that version's workers; promoting a version makes it
 * the one new turns start on. These are the Temporal API calls behind `npm run deploy:promote` and
 * `npm run deploy:status`, and what the in-flight deploy test drives.
 */
import { isGrpcServiceError, type Client } from '@temporalio/client';

/** gRPC status codes (grpc/status.h), as Temporal answers with them. */
const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;

export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

type VersionStatus = 'inactive' | 'current' | 'ramping' | 'draining' | 'drained' | 'unknown';

interface VersionSummary {
  buildId: string;
  status: VersionStatus;
  createdAt: Date | null;
}

export interface DeploymentSummary {
  name: string;
  /** The version new turns start on; null: the unversioned workers. */
  currentBuildId: string | null;
  rampingBuildId: string | null;
  versions: VersionSummary[];
}

/** temporal.api.enums.v1.WorkerDeploymentVersionStatus (CREATED: registered, never current). */
const STATUS_NAMES: Record<number, VersionStatus> = {
  1: 'inactive',
  2: 'current',
  3: 'ramping',
  4: 'draining',
  5: 'drained',
  6: 'inactive',
};

/** `<deployment name>.<build id>`, as Temporal names a version (the SDK's toCanonicalString). */
const versionName = (v: DeploymentVersion) => `${v.deploymentName}.${v.buildId}`;

const toDate = (ts: { seconds?: unknown; nanos?: number | null } | null | undefined): Date | null =>
  ts?.seconds == null ? null : new Date(Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));

/** The deployment's routing and versions; null when Temporal has never seen a worker of it. */
export async function describeDeployment(client: Client, deploymentName: string): Promise<DeploymentSummary | null> {
  try {
    const { workerDeploymentInfo: info } = await client.workflowService.describeWorkerDeployment({
      namespace: client.options.namespace,
      deploymentName,
    });
    const routing = info?.routingConfig;
    return {
      name: deploymentName,
      currentBuildId: routing?.currentDeploymentVersion?.buildId || null,
      rampingBuildId: routing?.rampingDeploymentVersion?.buildId || null,
      versions: (info?.versionSummaries ?? []).map((summary) => ({
        buildId: summary.deploymentVersion?.buildId ?? '',
        status: STATUS_NAMES[summary.status ?? 0] ?? 'unknown',
        createdAt: toDate(summary.createTime),
      })),
    };
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND) return null;
    throw err;
  }
}

/**
 * Turns still running on a version: the open workflows Temporal has pinned to it (the
 * `TemporalWorkerDeploymentVersion` search attribute). Zero means its workers can be stopped, as far as
 * turns go; Temporal's own drainage status (`drained`) says the same some minutes later.
 */
export async function countOpenPinnedWorkflows(client: Client, version: DeploymentVersion): Promise<number> {
  const query = `TemporalWorkerDeploymentVersion = '${versionName(version).replace(/'/g, "\\'")}' AND ExecutionStatus = 'Running'`;
  const { count } = await client.workflow.count(query);
  return count;
}

/** Refusals that mean "not yet": the version has not polled (or its deployment does not exist) yet. */
const isNotYet = (err: unknown) =>
  isGrpcServiceError(err) && (err.code === GRPC_NOT_FOUND || err.code === GRPC_FAILED_PRECONDITION);

/**
 * Makes `version` the current one: every turn started from now on is pinned to it, and turns already
 * running stay on the version that started them. Temporal refuses a version none of whose workers has
 * polled yet (a release whose workers are still starting): that refusal is retried until `waitMs`
 * has passed. Returns the build id that was current before (null: unversioned workers).
 */
export async function promoteVersion(
  client: Client,
  version: DeploymentVersion,
  opts: { identity: string; waitMs?: number; retryEveryMs?: number },
): Promise<{ previousBuildId: string | null }> {
  const deadline = Date.now() + (opts.waitMs ?? 60_000);
  for (;;) {
    try {
      const res = await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: client.options.namespace,
        deploymentName: version.deploymentName,
        buildId: version.buildId,
        identity: opts.identity,
      });
      return { previousBuildId: res.previousDeploymentVersion?.buildId || null };
    } catch (err) {
      if (!isNotYet(err) || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, opts.retryEveryMs ?? 500));
    }
  }
}
