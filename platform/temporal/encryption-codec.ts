/**
 * The payload codec every Temporal client and worker of the service uses (docs/operations.md#encrypted-workflow-payloads):
 * each payload of a user's turn (workflow and activity inputs and results, queries, the workflow's summary,
 * failures' details) is encrypted with AES-256-GCM under that user's data key before it leaves the process, so
 * a turn's history in Temporal holds no message, answer or data value in the clear. Workflow code never sees
 * it: the codec sits between the payload converter and the wire.
 *
 * - **Whose key**: the payload's serialization context names the workflow; a turn's workflow id is the turn
 *   id, and the turn row names its user. The service's own workflows (retention) carry no user content and
 *   stay plain, as do payloads with no workflow in their context. A turn whose row is gone (deleted under
 *   its running workflow) is encrypted under the service's key, derived from the master key.
 * - **Decoding needs no context**: the key id travels in the payload's metadata, so the codec server, a
 *   replay of an exported history and a rotated master key all find the key. A payload that is not ours
 *   (recorded histories from before the codec, the retention workflow's) passes through unchanged.
 * - **Crypto-shredding**: once a user's data key is destroyed, their payloads cannot be decoded anywhere.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { DataKey } from '../crypto/data-keys';
import type { WorkflowOwner } from './workflow-owner';

/** The payload encoding this codec writes (`metadata.encoding`). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const CIPHER = 'encryption-cipher';
const AES_GCM = 'AES-256-GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const utf8 = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array | null | undefined) => (bytes ? new TextDecoder().decode(bytes) : undefined);

export interface EncryptionCodecDeps {
  keys: {
    keyForUser(userId: string): Promise<DataKey>;
    keyById(keyId: string): Promise<DataKey>;
    serviceKey(): DataKey;
  };
  /** Whose a workflow's payloads are (./workflow-owner.ts). */
  ownerOfWorkflow(workflowId: string): Promise<WorkflowOwner>;
}

/** Thrown when an encrypted payload is malformed or does not decrypt under the key its metadata names. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

export const isEncryptedPayload = (payload: Payload) => text(payload.metadata?.encoding) === ENCRYPTED_ENCODING;

function encrypt(payload: Payload, key: DataKey): Payload {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  // The key id is bound to the ciphertext: a payload moved under another key's id does not decrypt.
  cipher.setAAD(Buffer.from(key.keyId));
  const plain = temporal.api.common.v1.Payload.encode(payload).finish();
  const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return {
    metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID]: utf8(key.keyId), [CIPHER]: utf8(AES_GCM) },
    data: sealed,
  };
}

function decrypt(payload: Payload, key: DataKey): Payload {
  const sealed = Buffer.from(payload.data ?? new Uint8Array());
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError('an encrypted payload is too short');
  const decipher = createDecipheriv('aes-256-gcm', key.key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(key.keyId));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new PayloadDecryptionError(`a payload does not decrypt under data key ${key.keyId}`);
  }
  const decoded = temporal.api.common.v1.Payload.decode(plain);
  return { metadata: decoded.metadata, data: decoded.data };
}

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly deps: EncryptionCodecDeps) {}

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const workflowId = context?.workflowId;
    const owner = workflowId ? await this.deps.ownerOfWorkflow(workflowId) : 'service_workflow';
    if (owner === 'service_workflow' || payloads.length === 0) return payloads;
    // A turn whose row is gone has no user: its payloads go under the service's key, never in the clear.
    const key = owner === 'orphaned_turn' ? this.deps.keys.serviceKey() : await this.deps.keys.keyForUser(owner.userId);
    return payloads.map((payload) => (isEncryptedPayload(payload) ? payload : encrypt(payload, key)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        if (!isEncryptedPayload(payload)) return payload;
        const keyId = text(payload.metadata?.[KEY_ID]);
        if (!keyId) throw new PayloadDecryptionError('an encrypted payload names no data key');
        return decrypt(payload, await this.deps.keys.keyById(keyId));
      }),
    );
  }
}
