/**
 * The payload codec (platform/temporal/encryption-codec.ts): a turn's payloads leave the process encrypted under
 * its user's data key, named in their metadata; they decode with that key alone, and not at all once it is gone.
 * The service's own workflows stay plain, and payloads from before the codec pass through.
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  PayloadDecryptionError,
  isEncryptedPayload,
} from '../../platform/temporal/encryption-codec';
import type { DataKey } from '../../platform/crypto/data-keys';
import type { WorkflowOwner } from '../../platform/temporal/workflow-owner';

const MESSAGE = 'I slept badly after the lighthouse keeper’s birthday party';

function keyStore() {
  const keys = new Map<string, DataKey>();
  const forUser = new Map<string, DataKey>();
  return {
    keys,
    async keyForUser(userId: string): Promise<DataKey> {
      if (!forUser.has(userId)) {
        const key = { keyId: `dk_${userId}`, userId, key: randomBytes(32) };
        forUser.set(userId, key);
        keys.set(key.keyId, key);
      }
      return forUser.get(userId)!;
    },
    serviceKey: () => SERVICE_KEY,
    async keyById(keyId: string): Promise<DataKey> {
      if (keyId === SERVICE_KEY.keyId) return SERVICE_KEY;
      const key = keys.get(keyId);
      if (!key) throw new Error(`data key ${keyId} is gone`);
      return key;
    },
  };
}

const owners: Record<string, string> = { turn_a: 'usr_a', turn_b: 'usr_b' };
const ownerOfWorkflow = async (workflowId: string): Promise<WorkflowOwner> =>
  owners[workflowId]
    ? { userId: owners[workflowId] }
    : workflowId.startsWith('turn_')
      ? 'orphaned_turn'
      : 'service_workflow';
const SERVICE_KEY: DataKey = { keyId: 'sk_master', userId: '', key: randomBytes(32) };
const payload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const context = (workflowId: string) => ({ type: 'workflow' as const, namespace: 'default', workflowId });
const bytesOf = (p: Payload) => Buffer.from(p.data ?? []).toString('latin1');

test("a turn's payload is encrypted under its user's key, named in its metadata, and decodes back exactly", async () => {
  const store = keyStore();
  const codec = new EncryptionCodec({ keys: store, ownerOfWorkflow });
  const original = payload({ messages: [{ role: 'user', content: MESSAGE }] });
  const [sealed] = await codec.encode([original], context('turn_a'));
  expect(isEncryptedPayload(sealed)).toBe(true);
  expect(new TextDecoder().decode(sealed.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
  expect(new TextDecoder().decode(sealed.metadata!['encryption-key-id'])).toBe('dk_usr_a');
  expect(bytesOf(sealed)).not.toContain('lighthouse');
  // Decoding needs no context: the key id is in the payload.
  const [opened] = await codec.decode([sealed]);
  expect(defaultPayloadConverter.fromPayload(opened)).toEqual({ messages: [{ role: 'user', content: MESSAGE }] });
  const texts = (p: Payload) =>
    Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('utf8')]));
  expect(texts(opened)).toEqual(texts(original));
});

test('two encodings of the same payload differ (a fresh IV each time)', async () => {
  const codec = new EncryptionCodec({ keys: keyStore(), ownerOfWorkflow });
  const [a] = await codec.encode([payload(MESSAGE)], context('turn_a'));
  const [b] = await codec.encode([payload(MESSAGE)], context('turn_a'));
  expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).toBe(false);
});

test("the service's own workflows and payloads without a workflow stay plain; old plain payloads pass through", async () => {
  const codec = new EncryptionCodec({ keys: keyStore(), ownerOfWorkflow });
  const plain = payload({ olderThanSeconds: 3600 });
  expect(await codec.encode([plain], context('amy-retention-run'))).toEqual([plain]);
  expect(await codec.encode([plain])).toEqual([plain]);
  expect(await codec.decode([plain])).toEqual([plain]);
});

test("a payload does not decode under another user's key, nor once its key is destroyed, nor when tampered with", async () => {
  const store = keyStore();
  const codec = new EncryptionCodec({ keys: store, ownerOfWorkflow });
  const [sealed] = await codec.encode([payload(MESSAGE)], context('turn_a'));
  await codec.encode([payload('other')], context('turn_b'));

  // Relabelled with user b's key id: the key id is bound to the ciphertext.
  const relabelled = {
    ...sealed,
    metadata: { ...sealed.metadata, 'encryption-key-id': new TextEncoder().encode('dk_usr_b') },
  };
  await expect(codec.decode([relabelled])).rejects.toBeInstanceOf(PayloadDecryptionError);

  const tampered = { ...sealed, data: Buffer.from(sealed.data!).fill(0, 20, 21) };
  await expect(codec.decode([tampered])).rejects.toBeInstanceOf(PayloadDecryptionError);

  store.keys.delete('dk_usr_a');
  await expect(codec.decode([sealed])).rejects.toThrow(/data key dk_usr_a is gone/);
});

test("a turn whose row is gone is encrypted under the service's key, never written in the clear", async () => {
  const codec = new EncryptionCodec({ keys: keyStore(), ownerOfWorkflow });
  const [sealed] = await codec.encode([payload(MESSAGE)], context('turn_gone'));
  expect(new TextDecoder().decode(sealed.metadata!['encryption-key-id'])).toBe('sk_master');
  expect(bytesOf(sealed)).not.toContain('lighthouse');
  expect(defaultPayloadConverter.fromPayload((await codec.decode([sealed]))[0])).toBe(MESSAGE);
});
