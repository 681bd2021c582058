/**
 * Text the API stores: what Postgres and every reader of it can hold unchanged. A NUL character cannot
 * be stored in a text or jsonb column at all, and a lone UTF-16 surrogate (valid in a JSON string,
 * "\ud800") has no UTF-8 form, so the driver would silently store U+FFFD instead. Both are a 400 that
 * names the field, never a 500 or a changed text.
 */
import { z } from 'zod';

const NUL = '\u0000';

/** Whether every surrogate in the string is half of a pair (String.prototype.isWellFormed, spelled out). */
function isWellFormedText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return false;
  }
  return true;
}

/** A problem with text as storable text, or null. */
function textProblem(text: string): string | null {
  if (text.includes(NUL)) return 'must not contain NUL characters (\\u0000)';
  if (!isWellFormedText(text))
    return 'must be well-formed Unicode (a lone surrogate such as \\ud800 has no UTF-8 form)';
  return null;
}

/** A z.string() that admits only storable text. */
export const storableText = () =>
  z.string().superRefine((text, ctx) => {
    const problem = textProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

/** Every string anywhere in a JSON value is storable (jsonb rejects NUL as well). */
export function jsonTextProblem(value: unknown): string | null {
  if (typeof value === 'string') return textProblem(value);
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = jsonTextProblem(item);
      if (problem) return problem;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const problem = textProblem(key) ?? jsonTextProblem(item);
      if (problem) return problem;
    }
  }
  return null;
}
