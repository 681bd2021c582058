/**
 * Webhook signing secrets (docs/webhooks.md#endpoints): `whsec_` and the base64 of 32 random bytes, the form the
 * Standard Webhooks libraries take. Stored sealed by the master key (platform/crypto/master-key.ts) the way users'
 * data keys are: AES-256-GCM, iv | ciphertext | tag, with the endpoint's id and which secret it is (current or
 * previous) as additional data, so a sealed secret copied to another row or column does not open. The master key's
 * id is stored beside it: `npm run key:rotate-master` re-seals every secret under the next key. No message built
 * here holds a secret.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { MasterKey, MasterKeyring } from '../crypto/master-key';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const AAD_LABEL = 'amy webhook secret v1';

/** Which of an endpoint's secrets: bound into the seal. */
export type SecretSlot = 'current' | 'previous';

export interface SealedSecret {
  sealed: Buffer;
  masterKeyId: string;
}

/** A secret that does not open: its master key is not in this process's ring, or the row was altered. */
export class WebhookSecretUnavailableError extends Error {
  override name = 'WebhookSecretUnavailableError';
}

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

const additionalData = (endpointId: string, slot: SecretSlot) => Buffer.from(`${AAD_LABEL}\0${endpointId}\0${slot}`);

export function sealWebhookSecret(
  secret: string,
  endpointId: string,
  slot: SecretSlot,
  master: MasterKey,
): SealedSecret {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', master.key, iv);
  cipher.setAAD(additionalData(endpointId, slot));
  const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { sealed, masterKeyId: master.id };
}

export function openWebhookSecret(
  stored: SealedSecret,
  endpointId: string,
  slot: SecretSlot,
  keyring: MasterKeyring,
): string {
  const master = keyring.byId(stored.masterKeyId);
  if (!master) {
    throw new WebhookSecretUnavailableError(
      `the ${slot} secret of webhook endpoint ${endpointId} is sealed under master key ${stored.masterKeyId}, which ` +
        'this process does not hold: restart it with the current key, or give it the old one in ' +
        'AMY_MASTER_KEY_PREVIOUS (docs/operations.md#keys)',
    );
  }
  const { sealed } = stored;
  if (sealed.length <= IV_BYTES + TAG_BYTES) {
    throw new WebhookSecretUnavailableError(`the ${slot} secret of webhook endpoint ${endpointId} is malformed`);
  }
  const decipher = createDecipheriv('aes-256-gcm', master, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(additionalData(endpointId, slot));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new WebhookSecretUnavailableError(
      `the ${slot} secret of webhook endpoint ${endpointId} does not open under master key ${stored.masterKeyId}`,
    );
  }
}
