/**
 * How long a conversation `POST /v1/turns` takes (docs/api.md#the-turn): a client sends the whole
 * conversation on every turn, so these are the limits of a long chat, and the body limit of that route is
 * derived from them rather than set apart. Kept free of zod, like ./event-catalog.ts, so that the SDK checks a
 * conversation against the same numbers before sending it (sdk/src/resources/turns.ts).
 */

export const MAX_MESSAGES = 100;
/**
 * Characters of one message's `content`, counted as Unicode code points, as zod's string checks count them
 * and Python's `len` does: an emoji is one (a family or a flag made of several code points is several).
 */
export const MAX_MESSAGE_CHARS = 20_000;

/** How many characters (code points) `text` holds, as the API counts them: a surrogate pair is one. */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

/**
 * The most bytes one character of a string can take in a JSON body. As UTF-8 it takes at most 4, and
 * JSON.stringify writes no more than the 6 bytes of `\u001f` for a control character; but JSON lets an
 * encoder write any character as `\uXXXX`, and one outside the Basic Multilingual Plane as two of them
 * (`\ud83d\ude00`), which some encoders do by default (Python's `json.dumps` does so for everything but
 * ASCII): 12 is the bound that holds for every encoder.
 */
const MAX_JSON_BYTES_PER_CHAR = 12;
/**
 * Room for one message beside its text: `{"role":"assistant","content":""}` is 33 bytes, and with every
 * letter of its keys and role escaped and pretty-printed, well under this.
 */
const MESSAGE_FRAMING_BYTES = 1024;
/** Room for the rest of the body: the array's brackets, `stream`, `context` and its two flags, escaped or not. */
const REQUEST_FRAMING_BYTES = 4096;

/**
 * The body limit of `POST /v1/turns`: any conversation within the limits above, however a JSON encoder writes
 * it, fits (100 × (20,000 × 12 + 1,024) + 4,096 = 24,106,496 bytes, about 23 MiB; the same conversation written
 * by JSON.stringify takes at most half of it). Past it, a body can only be padding, and is refused with 413
 * before it is parsed.
 */
export const MAX_CREATE_TURN_BODY_BYTES =
  MAX_MESSAGES * (MAX_MESSAGE_CHARS * MAX_JSON_BYTES_PER_CHAR + MESSAGE_FRAMING_BYTES) + REQUEST_FRAMING_BYTES;
