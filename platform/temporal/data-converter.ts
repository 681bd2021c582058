/**
 * The data converter of every Temporal client and worker of the service (API, worker, `turn:replay`,
 * `turn:retry`, tests): the default payload converter, then the encryption codec (./encryption-codec.ts).
 */
import type { DataConverter } from '@temporalio/common';
import type { Pool } from 'pg';
import type { DataKeyStore } from '../crypto/data-keys';
import { EncryptionCodec } from './encryption-codec';
import { createWorkflowOwners } from './workflow-owner';

export function createDataConverter(pool: Pool, keys: DataKeyStore): DataConverter {
  return { payloadCodecs: [new EncryptionCodec({ keys, ownerOfWorkflow: createWorkflowOwners(pool) })] };
}
