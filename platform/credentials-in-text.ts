/**
 * Whether a text looks like it holds a credential (docs/design.md#no-secrets-in-memory): the check in front of every
 * memory write, so Amy never remembers a key, a token, a password or a card number a user pasted.
 *
 * It reads the text the way secret scanners do (gitleaks, detect-secrets, secretlint), from three kinds of evidence:
 * - the published shape of a credential: a vendor's key prefix, a JWT, a private key block, an `Authorization`
 *   scheme, a URL with a password in it, or a secret named as such (`password: …`, `my API key is …`);
 * - a card number: 13 to 19 digits, together or in groups split by spaces or dashes, that card-validator takes for
 *   a valid number of a card network (its prefix, one of its lengths, and the Luhn check digit);
 * - a long string that reads as random rather than as words: hex of 32 characters or more, or 20 or more
 *   characters of the base64 alphabets with a high Shannon entropy.
 * It is written for health text, whose false positives are the costly ones: step counts ("10,000 steps"), lab
 * values ("LDL 3.4 mmol/L"), dates, phone numbers and words joined by hyphens or underscores pass.
 *
 * What it finds is the kind of credential, never the text, so a caller may log it or say it in an error.
 */
import validateCard from 'card-validator';
import { API_KEY_PREFIX } from './users';

export type CredentialKind = 'api_key' | 'access_token' | 'private_key' | 'password' | 'card_number' | 'random_string';

/** How a message names each kind, after "looks like". */
export const CREDENTIAL_DESCRIPTIONS: Record<CredentialKind, string> = {
  api_key: 'an API key',
  access_token: 'an access token',
  private_key: 'a private key',
  password: 'a password',
  card_number: 'a payment card number',
  random_string: 'a key or token (a long random string)',
};

/** Published shapes: each pattern is a credential wherever it appears. */
const SHAPES: Array<[CredentialKind, RegExp]> = [
  ['private_key', /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/],
  // Vendors' key prefixes: Anthropic, OpenAI (and other `sk-` keys), Stripe, AWS access key ids, GitHub,
  // GitLab, Slack (tokens and webhook URLs), Google, npm, Hugging Face, SendGrid, and this service's own.
  ['api_key', /\bsk-ant-[A-Za-z0-9_-]{20,}/],
  ['api_key', /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/],
  ['api_key', /\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}/],
  ['api_key', /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/],
  ['api_key', /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})/],
  ['api_key', /\bglpat-[A-Za-z0-9_-]{20,}/],
  ['api_key', /\bxox[abposre]-[A-Za-z0-9-]{10,}/],
  ['api_key', /hooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,}/],
  ['api_key', /\bAIza[0-9A-Za-z_-]{35}/],
  ['api_key', /\bnpm_[A-Za-z0-9]{36}\b/],
  ['api_key', /\bhf_[A-Za-z0-9]{30,}/],
  ['api_key', /\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/],
  ['api_key', new RegExp(`\\b${API_KEY_PREFIX}[0-9A-Za-z]{8,}`)],
  // A JWT: three base64url parts, the first two JSON objects (`{"` is `eyJ`).
  ['access_token', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/],
  // A URL that carries a user and a password (`postgres://amy:s3cret@db…`).
  ['access_token', /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i],
];

/**
 * A secret named as such, then its value: `password: x`, `my password for the Oura app is x`, `pwd=x`,
 * `"api_key": "x"` (a client's meta is read as its JSON). The name, what it is for, then `is`, `was`, `:` or `=`.
 */
const STATED =
  /\b(passwords?|passwd|passphrase|passcode|pwd|pin(?: code| number)?|api[ _-]?key|access[ _-]?key|secret[ _-]?key|client[ _-]?secret|(?:access|auth|api|refresh|bearer|session|personal access)[ _-]?token|token|secret)\b(?:\s+(?:for|to|of|on)\s+[^.,;:=\n]{1,40}?)?["']?\s*(?:\bis\b|\bwas\b|[:=])\s*["'“‘`]?([^\s"'”’`]+)/gi;

/** `Authorization: Bearer …` (RFC 6750) and `Basic …` (RFC 7617) credentials, wherever they are pasted. */
const AUTH_SCHEME = /\b(bearer|basic)\s+([A-Za-z0-9._~+/-]+=*)/gi;

/** A value as stated, without the punctuation that ends its sentence. */
const valueOf = (raw: string) => raw.replace(/[.,;:!?)\]]+$/, '');

/** Mixes digits with letters, or lower case with an upper case letter past the first: not a plain word. */
const mixesCharacterClasses = (value: string) =>
  (/\d/.test(value) && /[A-Za-z]/.test(value)) || (/[a-z]/.test(value) && /.[A-Z]/.test(value));

function statedSecret(text: string): CredentialKind | null {
  for (const [, name, raw] of text.matchAll(STATED)) {
    const value = valueOf(raw);
    const lowered = name.toLowerCase();
    if (lowered.startsWith('pin')) {
      if (/^\d{4,8}$/.test(value)) return 'password';
    } else if (/^pass|^pwd/.test(lowered)) {
      if (value.length >= 4) return 'password';
    } else if (value.length >= 8 && mixesCharacterClasses(value)) {
      return /token/.test(lowered) ? 'access_token' : 'api_key';
    }
  }
  for (const [, scheme, value] of text.matchAll(AUTH_SCHEME)) {
    if (value.length >= 12 && mixesCharacterClasses(value)) {
      return scheme.toLowerCase() === 'bearer' ? 'access_token' : 'password';
    }
  }
  return null;
}

/**
 * A payment card number by Braintree's card-validator: a network's prefix and one of its lengths
 * (credit-card-type's table, kept up to date there), and the Luhn check digit (ISO/IEC 7812), which a random digit
 * string passes one time in ten; UnionPay's too, which the library skips by default. 12-digit Maestro numbers are
 * left out: too close to phone numbers with a country code.
 */
const isCardNumber = (digits: string) =>
  digits.length >= 13 && digits.length <= 19 && validateCard.number(digits, { luhnValidateUnionPay: true }).isValid;

/** Digits in groups split by single spaces or dashes: a card as people write it (not `+` phone numbers, not decimals). */
const DIGIT_GROUPS = /(?<![\d+.,])\d+(?:[ -]\d+)*/g;

/**
 * A card number: the digits of a run of groups, from its first group on, that make a valid card number. Only leading groups are tried, so a card followed by its expiry ("… 1111 12/27")
 * is found, while a long list of numbers is not read as cards at every offset.
 */
function cardNumber(text: string): boolean {
  for (const [run] of text.matchAll(DIGIT_GROUPS)) {
    let digits = '';
    for (const group of run.split(/[ -]/)) {
      digits += group;
      if (digits.length > 19) break;
      if (isCardNumber(digits)) return true;
    }
  }
  return false;
}

/** Shannon entropy in bits per character. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

/**
 * The mean length of the words a string is made of (`MyFitnessPal2024`: My, Fitness, Pal, 2024): text reads in
 * words of four or five letters, a random token changes case or turns to digits every other character.
 */
function meanWordLength(text: string): number {
  const words = text.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g) ?? [];
  return words.length === 0 ? 0 : words.join('').length / words.length;
}

const TOKEN_RUN = /[A-Za-z0-9+/=_-]{20,}/g;
const JOINERS = /[-_/+]/g;
const MIN_RANDOM_LENGTH = 20;
const MIN_HEX_LENGTH = 32;

/**
 * The runs of the base64 alphabets long enough to be a key. A run whose hyphens, underscores or slashes come
 * more often than one character in ten is words joined together (`Zone2-cardio-3x-per-week`), not base64
 * (where they are 2 characters of 64): its parts are read on their own.
 */
function tokenCandidates(text: string): string[] {
  return [...text.matchAll(TOKEN_RUN)].flatMap(([run]) => {
    const token = run.replace(/=+$/, '');
    const joiners = token.match(JOINERS)?.length ?? 0;
    const parts = joiners / token.length > 0.1 ? token.split(JOINERS) : [token];
    return parts.filter((part) => part.length >= MIN_RANDOM_LENGTH);
  });
}

/**
 * Hex of 32 characters or more at 3 bits per character (detect-secrets' hex limit); other runs when they do not
 * read as words and carry 3.5 bits per character, or, 32 characters or more, 4.6 bits whatever they read as (a
 * random run of 20 base62 characters carries about 4, English words joined together 3.5 to 4.5).
 */
function randomString(text: string): boolean {
  return tokenCandidates(text).some((token) => {
    const bits = entropy(token);
    if (/^[0-9a-f]+$/i.test(token)) {
      return token.length >= MIN_HEX_LENGTH && /\d/.test(token) && /[a-f]/i.test(token) && bits >= 3;
    }
    return (meanWordLength(token) < 3 && bits >= 3.5) || (token.length >= 32 && bits >= 4.6);
  });
}

/** The kind of credential the text appears to hold, or null. */
export function findCredential(text: string): CredentialKind | null {
  for (const [kind, pattern] of SHAPES) if (pattern.test(text)) return kind;
  const stated = statedSecret(text);
  if (stated) return stated;
  if (cardNumber(text)) return 'card_number';
  if (randomString(text)) return 'random_string';
  return null;
}
