import { randomFillSync } from 'node:crypto';
import { ulid as ulidFrom } from 'ulid';
import { ID_PREFIXES, type IdKind } from '../contracts/ids';

/**
 * The random part of this process's ULIDs, drawn from the CSPRNG a block at a time: ulid's default source
 * makes one getRandomValues call per character (16 per id), which showed in the worker's CPU profile. The
 * bytes and their use (byte / 256, as ulid's own source) are the same; only the calls are fewer.
 */
const RANDOM_BLOCK_BYTES = 4096;
const randomBlock = new Uint8Array(RANDOM_BLOCK_BYTES);
let nextRandomByte = RANDOM_BLOCK_BYTES;

function blockRandom(): number {
  if (nextRandomByte === RANDOM_BLOCK_BYTES) {
    randomFillSync(randomBlock);
    nextRandomByte = 0;
  }
  return randomBlock[nextRandomByte++] / 256;
}

/** A ULID (time-ordered, 80 random bits). */
export const ulid = (): string => ulidFrom(undefined, blockRandom);

export const newId = (kind: IdKind) => `${ID_PREFIXES[kind]}${ulid()}`;
