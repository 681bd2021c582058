/**
 * The payload codec (platform/temporal/encryption-codec.ts): a turn's payloads leave the process encrypted under
 * its user's data key, named in their metadata; they decode with that key alone, and not at all once it is gone.
 * A turn's workflow takes nothing else: no plaintext, nothing sealed for another user, nothing at all once its
 * row is gone. The service's own workflows stay plain, and outside a workflow old plain payloads pass through.
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  PayloadDecryptionError,
  PayloadRefusedError,
  TurnWithoutOwnerError,
  WITHHELD_ENCODING,
  isEncryptedPayload,
} from '../../platform/temporal/encryption-codec';
import { DataKeyUnavailableError, type DataKey } from '../../platform/crypto/data-keys';
import type { WorkflowOwner } from '../../platform/temporal/workflow-owner';
import { isServiceWorkflowId } from '../../platform/temporal/service-workflows';

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
    async keyById(keyId: string): Promise<DataKey> {
      const key = keys.get(keyId);
      if (!key) throw new DataKeyUnavailableError(`data key ${keyId} is gone`);
      return key;
    },
  };
}

const owners: Record<string, string> = { turn_a: 'usr_a', turn_b: 'usr_b' };
const ownerOfWorkflow = async (workflowId: string): Promise<WorkflowOwner> =>
  isServiceWorkflowId(workflowId)
    ? 'service_workflow'
    : Object.hasOwn(owners, workflowId)
      ? { userId: owners[workflowId] }
      : 'orphaned_turn';
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

test("a turn's workflow takes no plaintext payload: only `binary/null`, which holds no value, passes", async () => {
  const codec = new EncryptionCodec({ keys: keyStore(), ownerOfWorkflow });
  const plain = payload({ turnId: 'turn_a', userId: 'usr_b', messages: [{ role: 'user', content: MESSAGE }] });
  await expect(codec.decode([plain], context('turn_a'))).rejects.toBeInstanceOf(PayloadRefusedError);
  await expect(codec.decode([plain], context('turn_a'))).rejects.toThrow(/not encrypted/);
  const nothing = payload(undefined);
  expect(new TextDecoder().decode(nothing.metadata!.encoding)).toBe('binary/null');
  expect(await codec.decode([nothing], context('turn_a'))).toEqual([nothing]);
  // The service's own workflows take plain payloads, and so does a decoding with no workflow (the codec server).
  expect(await codec.decode([plain], context('amy-retention-run-2026-12-06T07:15:00Z'))).toEqual([plain]);
  expect(await codec.decode([plain])).toEqual([plain]);
});

test("a turn's workflow takes nothing sealed for another user, though the payload itself is sound", async () => {
  const codec = new EncryptionCodec({ keys: keyStore(), ownerOfWorkflow });
  const [usersB] = await codec.encode([payload({ userId: 'usr_b' })], context('turn_b'));
  expect(defaultPayloadConverter.fromPayload((await codec.decode([usersB], context('turn_b')))[0])).toEqual({
    userId: 'usr_b',
  });
  await expect(codec.decode([usersB], context('turn_a'))).rejects.toBeInstanceOf(PayloadRefusedError);
  await expect(codec.decode([usersB], context('turn_a'))).rejects.toThrow(/not its user's/);
});

test('a workflow whose turn has no row: nothing of it is written under any key, nor read, and the process is told', async () => {
  const told: string[] = [];
  const codec = new EncryptionCodec({ keys: keyStore(), ownerOfWorkflow, onTurnWithoutOwner: (id) => told.push(id) });
  const [sealed] = await codec.encode([payload(MESSAGE)], context('turn_a'));
  const [dropped] = await codec.encode([payload(MESSAGE)], context('turn_gone'));
  expect(dropped).toEqual({
    metadata: { encoding: new TextEncoder().encode(WITHHELD_ENCODING) },
    data: new Uint8Array(),
  });
  await expect(codec.decode([sealed], context('turn_gone'))).rejects.toBeInstanceOf(TurnWithoutOwnerError);
  // An id of no form the service uses is no service workflow: it is a turn's, and this one has no row.
  await expect(codec.decode([payload(MESSAGE)], context('retention-now'))).rejects.toBeInstanceOf(
    TurnWithoutOwnerError,
  );
  expect(told).toEqual(['turn_gone', 'turn_gone', 'retention-now']);
});

test('without anyone to tell (the API, a tool), encoding for a turn without a row fails instead', async () => {
  const codec = new EncryptionCodec({ keys: keyStore(), ownerOfWorkflow });
  await expect(codec.encode([payload(MESSAGE)], context('turn_gone'))).rejects.toBeInstanceOf(TurnWithoutOwnerError);
});

test('a turn whose user’s key is destroyed (its account being deleted) is treated as one without owner', async () => {
  const told: string[] = [];
  const store = keyStore();
  const codec = new EncryptionCodec({ keys: store, ownerOfWorkflow, onTurnWithoutOwner: (id) => told.push(id) });
  const [sealed] = await codec.encode([payload(MESSAGE)], context('turn_a'));
  store.keys.delete('dk_usr_a');
  await expect(codec.decode([sealed], context('turn_a'))).rejects.toBeInstanceOf(DataKeyUnavailableError);
  const gone = { ...store, keyForUser: async () => Promise.reject(new DataKeyUnavailableError('destroyed')) };
  const afterDeletion = new EncryptionCodec({ keys: gone, ownerOfWorkflow, onTurnWithoutOwner: (id) => told.push(id) });
  const [dropped] = await afterDeletion.encode([payload(MESSAGE)], context('turn_a'));
  expect(new TextDecoder().decode(dropped.metadata!.encoding)).toBe(WITHHELD_ENCODING);
  expect(told).toEqual(['turn_a', 'turn_a']);
});
