/** A receiver's `Retry-After` as the webhook schedule reads it (platform/webhooks/send.ts). */
import { parseRetryAfter } from '../../platform/webhooks/send';

const now = new Date('2026-12-02T09:00:00Z');

test('delay-seconds, an HTTP date (in the past: now), or nothing when absent or unreadable', () => {
  expect(parseRetryAfter('120', now)).toBe(120);
  expect(parseRetryAfter(' 0 ', now)).toBe(0);
  expect(parseRetryAfter('Wed, 02 Dec 2026 09:05:00 GMT', now)).toBe(300);
  expect(parseRetryAfter('Wed, 02 Dec 2026 08:00:00 GMT', now)).toBe(0);
  expect(parseRetryAfter(undefined, now)).toBeNull();
  expect(parseRetryAfter('soon', now)).toBeNull();
  expect(parseRetryAfter('-5', now)).toBeNull();
});
