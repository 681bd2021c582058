/**
 * The codec server's operators (`AMY_CODEC_OPERATORS=name:token,…`): credentials of their own, never a user's API
 * key. A token is compared in constant time; a session remembers the SHA-256 of the token it was signed in with,
 * so that changing an operator's token ends the sessions the old one opened.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export interface CodecOperator {
  name: string;
  /** SHA-256 (hex) of the operator's token. */
  tokenHash: string;
}

export interface CodecOperators {
  /** The operator this token is, or null. */
  byToken(token: string): CodecOperator | null;
  /** The operator whose token has this SHA-256, or null (a token since changed or removed). */
  byTokenHash(tokenHash: string): CodecOperator | null;
}

/** Shorter tokens are refused: a token is the whole of an operator's credential. */
const MIN_TOKEN_LENGTH = 24;

export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** `name:token,name:token` → the operators; throws on an entry that is not name:token with a long enough token. */
export function parseCodecOperators(spec: string): CodecOperators {
  const tokens = new Map<string, string>();
  for (const entry of spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.indexOf(':');
    const [name, token] = [entry.slice(0, at), entry.slice(at + 1)];
    if (at < 1 || token.length < MIN_TOKEN_LENGTH) {
      throw new Error(
        `AMY_CODEC_OPERATORS: each entry is name:token, the token at least ${MIN_TOKEN_LENGTH} characters`,
      );
    }
    tokens.set(token, name);
  }
  if (tokens.size === 0) throw new Error('AMY_CODEC_OPERATORS names no operator');
  const byHash = new Map([...tokens].map(([token, name]) => [sha256Hex(token), name]));
  return {
    byToken(token) {
      const given = Buffer.from(token);
      for (const [known, name] of tokens) {
        const expected = Buffer.from(known);
        if (expected.length === given.length && timingSafeEqual(expected, given))
          return { name, tokenHash: sha256Hex(known) };
      }
      return null;
    },
    byTokenHash(tokenHash) {
      const name = byHash.get(tokenHash);
      return name === undefined ? null : { name, tokenHash };
    },
  };
}
