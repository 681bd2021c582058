/**
 * The payload codec every Temporal client and worker of the service uses (docs/operations.md#encrypted-workflow-payloads):
 * each payload of a user's turn (workflow and activity inputs and results, queries, the workflow's summary,
 * failures' messages and details) is encrypted with AES-256-GCM under that user's data key before it leaves the
 * process, so a turn's history in Temporal holds no message, answer or data value in the clear. Workflow code
 * never sees it: the codec sits between the payload converter and the wire.
 *
 * - **Whose key**: the payload's serialization context names the workflow; a turn's workflow id is the turn
 *   id, and the turn row names its user. The service's own workflows (retention, webhook deliveries, known by
 *   their ids: ./service-workflows.ts) carry no user content and stay plain.
 * - **What a turn's workflow accepts**: only payloads encrypted under its own user's key. A plaintext payload,
 *   or one sealed for another user, is refused, so nobody who can start or signal a workflow on Temporal's
 *   port (the Web UI, the CLI) can make a turn read or write for a user of their choosing: its workflow never
 *   runs a step. Only `binary/null` (no value at all) passes.
 * - **A turn with no row** (its account deleted under a running workflow, or an id no turn ever had), or whose
 *   user's key is destroyed (its account being deleted), has no one to encrypt for, and no key that outlives its user may stand in: nothing of it is decoded, what would be
 *   encoded is withheld (a payload with no data, `binary/withheld`, which nothing decodes), and the process is
 *   told (`onTurnWithoutOwner`: the worker terminates the workflow). Encoding withholds rather than throws
 *   because the SDK encodes an activity's failure with the same context, and a second error there has no
 *   handler left.
 * - **Decoding without a workflow** (the codec server, a tool reading an exported history) needs no context:
 *   the key id travels in the payload's metadata, so a rotated master key still finds it. A payload that is
 *   not ours (histories recorded before the codec) passes through unchanged there.
 * - **Crypto-shredding**: once a user's data key is destroyed, their payloads cannot be decoded anywhere.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { DataKeyUnavailableError, type DataKey } from '../crypto/data-keys';
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
  };
  /** Whose a workflow's payloads are (./workflow-owner.ts). */
  ownerOfWorkflow(workflowId: string): Promise<WorkflowOwner>;
  /** Told of each workflow whose payloads were refused because its turn has no row (the worker ends it). */
  onTurnWithoutOwner?(workflowId: string): void;
}

/** Thrown when an encrypted payload is malformed or does not decrypt under the key its metadata names. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

/** A payload a turn's workflow must not take: in the clear, or sealed for another user. */
export class PayloadRefusedError extends Error {
  override name = 'PayloadRefusedError';
}

/** A workflow whose turn has no row: none of its payloads is encoded or decoded. */
export class TurnWithoutOwnerError extends Error {
  override name = 'TurnWithoutOwnerError';
}

/** The payload converter's encoding of `undefined`: no value, so nothing to protect. */
const NO_VALUE_ENCODING = 'binary/null';
/** What stands in for a payload of a turn with no owner: its data dropped, never written under any key. */
export const WITHHELD_ENCODING = 'binary/withheld';
const withheld = (): Payload => ({ metadata: { encoding: utf8(WITHHELD_ENCODING) }, data: new Uint8Array() });

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
    if (payloads.length === 0 || !context?.workflowId) return payloads;
    const owner = await this.deps.ownerOfWorkflow(context.workflowId);
    if (owner === 'orphaned_turn') {
      const why = `workflow ${context.workflowId} belongs to no turn: none of its payloads is written`;
      return this.withheldFor(context.workflowId, payloads, new TurnWithoutOwnerError(why));
    }
    if (owner === 'service_workflow') return payloads;
    let key: DataKey;
    try {
      key = await this.deps.keys.keyForUser(owner.userId);
    } catch (err) {
      if (err instanceof DataKeyUnavailableError) return this.withheldFor(context.workflowId, payloads, err);
      throw err;
    }
    return payloads.map((payload) => (isEncryptedPayload(payload) ? payload : encrypt(payload, key)));
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    if (payloads.length === 0) return payloads;
    const owner = context?.workflowId ? await this.decodingOwner(context.workflowId) : 'service_workflow';
    return Promise.all(
      payloads.map(async (payload) => {
        if (!isEncryptedPayload(payload)) {
          if (owner !== 'service_workflow' && text(payload.metadata?.encoding) !== NO_VALUE_ENCODING) {
            throw new PayloadRefusedError(
              `a payload of turn ${context!.workflowId} is not encrypted: a turn's workflow takes only what the service encrypted for its user`,
            );
          }
          return payload;
        }
        const keyId = text(payload.metadata?.[KEY_ID]);
        if (!keyId) throw new PayloadDecryptionError('an encrypted payload names no data key');
        const key = await this.deps.keys.keyById(keyId).catch((err: unknown) => {
          // Destroyed: the turn's account is being deleted, its row about to go; its workflow with it.
          if (err instanceof DataKeyUnavailableError && owner !== 'service_workflow') {
            this.deps.onTurnWithoutOwner?.(context!.workflowId!);
          }
          throw err;
        });
        if (owner !== 'service_workflow' && key.userId !== owner.userId) {
          throw new PayloadRefusedError(
            `a payload of turn ${context!.workflowId} is sealed under data key ${keyId}, which is not its user's`,
          );
        }
        return decrypt(payload, key);
      }),
    );
  }

  /**
   * What is encoded for a turn whose user is gone (no row, or no key any more): in the worker, which is told so
   * that it ends the workflow, nothing (withheld payloads), since the SDK encodes an activity's failure with the
   * same context and has no handler left for a second error; anywhere else (the API's start of a turn whose
   * account went meanwhile) the encoding fails, and so does what it was for.
   */
  private withheldFor(workflowId: string, payloads: Payload[], why: Error): Payload[] {
    if (!this.deps.onTurnWithoutOwner) throw why;
    this.deps.onTurnWithoutOwner(workflowId);
    return payloads.map(withheld);
  }

  /** The owner of the workflow whose payloads are decoded; a turn without a row is refused, and reported. */
  private async decodingOwner(workflowId: string): Promise<Exclude<WorkflowOwner, 'orphaned_turn'>> {
    const owner = await this.deps.ownerOfWorkflow(workflowId);
    if (owner !== 'orphaned_turn') return owner;
    this.deps.onTurnWithoutOwner?.(workflowId);
    throw new TurnWithoutOwnerError(`workflow ${workflowId} belongs to no turn: none of its payloads is read`);
  }
}
