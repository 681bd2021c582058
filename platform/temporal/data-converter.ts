/**
 * The data converter of every Temporal client and worker of the service (API, worker, `turn:replay`,
 * `turn:retry`, tests): the default payload converter, then the encryption codec (./encryption-codec.ts).
 */
import type { DataConverter } from '@temporalio/common';
import type { Pool } from 'pg';
import type { DataKeyStore } from '../crypto/data-keys';
import { EncryptionCodec } from './encryption-codec';
import { createWorkflowOwners, type WorkflowOwners } from './workflow-owner';

/** `owners`: whose each workflow's payloads are; the API passes its own, which it tells of the turns it creates. */
export function createDataConverter(
  pool: Pool,
  keys: DataKeyStore,
  owners: WorkflowOwners = createWorkflowOwners(pool),
): DataConverter {
  return { payloadCodecs: [new EncryptionCodec({ keys, ownerOfWorkflow: (id) => owners.ownerOf(id) })] };
}
