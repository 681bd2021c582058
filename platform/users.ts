/**
 * Users and their API keys. A key is shown once, at creation; the database keeps only its SHA-256, so a
 * leaked table does not leak working keys. Lookups go through the unique index on the hash: the raw key is
 * never compared character by character, so response time does not reveal how much of a guess was right.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Prisma } from '../generated/prisma/client';
import type { Db } from './db';
import { newId } from './ids';

export const API_KEY_PREFIX = 'amy_live_';
const API_KEY_RANDOM_CHARS = 32;
/** What a key list can show to tell keys apart: `amy_live_` plus three random characters. */
const DISPLAY_PREFIX_LENGTH = 12;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const USER_NAME = /^[a-zA-Z0-9_.-]{1,64}$/;

export interface UserSummary {
  id: string;
  name: string;
}

export class InvalidUserNameError extends Error {
  override name = 'InvalidUserNameError';
  constructor(readonly userName: string) {
    super(`invalid user name ${JSON.stringify(userName)}: use 1–64 characters from a-z A-Z 0-9 _ . -`);
  }
}

export class UserExistsError extends Error {
  override name = 'UserExistsError';
  constructor(readonly userName: string) {
    super(`a user named ${JSON.stringify(userName)} already exists`);
  }
}

function assertValidUserName(name: string) {
  if (!USER_NAME.test(name)) throw new InvalidUserNameError(name);
}

/** 32 base62 characters (~190 bits); bytes ≥ 248 are skipped so every character is equally likely. */
function generateApiKey(): string {
  let random = '';
  while (random.length < API_KEY_RANDOM_CHARS) {
    for (const byte of randomBytes(API_KEY_RANDOM_CHARS)) {
      if (byte < 248 && random.length < API_KEY_RANDOM_CHARS) random += BASE62[byte % 62];
    }
  }
  return API_KEY_PREFIX + random;
}

export const hashApiKey = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

function newApiKeyRecord() {
  const apiKey = generateApiKey();
  return {
    apiKey,
    record: { id: newId('apiKey'), keyHash: hashApiKey(apiKey), prefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH) },
  };
}

const isUniqueViolation = (err: unknown) => err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';

/** Creates the user and their first key in one transaction: either both exist afterwards or neither does. */
export async function createUserWithApiKey(db: Db, name: string): Promise<{ user: UserSummary; apiKey: string }> {
  assertValidUserName(name);
  const { apiKey, record } = newApiKeyRecord();
  try {
    const user = await db.user.create({
      data: { id: newId('user'), name, apiKeys: { create: record } },
      select: { id: true, name: true },
    });
    return { user, apiKey };
  } catch (err) {
    if (isUniqueViolation(err)) throw new UserExistsError(name);
    throw err;
  }
}

/** For the demo: the user named `name`, created (without a key) if missing. Safe to call concurrently. */
export async function ensureUser(db: Db, name: string): Promise<UserSummary> {
  assertValidUserName(name);
  // ON CONFLICT DO NOTHING: of concurrent callers, one inserts and the others read its row.
  await db.user.createMany({ data: [{ id: newId('user'), name }], skipDuplicates: true });
  return db.user.findUniqueOrThrow({ where: { name }, select: { id: true, name: true } });
}

/** Mints another key for an existing user; returns the key, which is not stored anywhere. */
export async function issueApiKey(db: Db, userId: string): Promise<string> {
  const { apiKey, record } = newApiKeyRecord();
  await db.apiKey.create({ data: { ...record, userId } });
  return apiKey;
}

export async function findUserIdByApiKey(db: Db, key: string): Promise<string | null> {
  if (!key.startsWith(API_KEY_PREFIX)) return null;
  const found = await db.apiKey.findUnique({ where: { keyHash: hashApiKey(key) }, select: { userId: true } });
  return found?.userId ?? null;
}

export async function findUserByName(db: Db, name: string): Promise<UserSummary | null> {
  return db.user.findUnique({ where: { name }, select: { id: true, name: true } });
}
