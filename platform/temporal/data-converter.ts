/**
 * The data converter of every Temporal client and worker of the service (API, worker, `turn:replay`,
 * `turn:retry`, tests): the default payload converter, then the encryption codec (./encryption-codec.ts);
 * failures' messages and stack traces go into payloads, and so are encrypted too (./failure-converter.ts).
 */
import type { DataConverter } from '@temporalio/common';
import type { Pool } from 'pg';
import type { DataKeyStore } from '../crypto/data-keys';
import { EncryptionCodec, type EncryptionCodecDeps } from './encryption-codec';
import { createWorkflowOwners, type WorkflowOwners } from './workflow-owner';

/** The failure converter's module, for bundleWorkflowCode (`failureConverterPath`) and the data converter. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

export interface DataConverterOptions {
  /** Whose each workflow's payloads are; the API and the worker pass their own, which they share. */
  owners?: WorkflowOwners;
  /** What the process does about a workflow whose turn has no row (the worker ends it). */
  onTurnWithoutOwner?: EncryptionCodecDeps['onTurnWithoutOwner'];
}

export function createDataConverter(pool: Pool, keys: DataKeyStore, options: DataConverterOptions = {}): DataConverter {
  const owners = options.owners ?? createWorkflowOwners(pool);
  return {
    payloadCodecs: [
      new EncryptionCodec({
        keys,
        ownerOfWorkflow: (id) => owners.ownerOf(id),
        ...(options.onTurnWithoutOwner ? { onTurnWithoutOwner: options.onTurnWithoutOwner } : {}),
      }),
    ],
    failureConverterPath: FAILURE_CONVERTER_PATH,
  };
}
