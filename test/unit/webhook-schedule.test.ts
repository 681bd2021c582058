/** The webhook retry schedule (workflows/webhook-schedule.ts): doubling from a few seconds, jittered, capped at an hour. */
import { busyDelayMs, retryDelayMs, WEBHOOK_RETRY_SCHEDULE } from '../../workflows/webhook-schedule';

const s = WEBHOOK_RETRY_SCHEDULE;
const MIDDLE = 0.5; // no jitter

test('the first retry comes a few seconds after the first failure, then each wait doubles', () => {
  expect([1, 2, 3, 4, 5].map((failures) => retryDelayMs(s, failures, null, MIDDLE))).toEqual([
    5_000, 10_000, 20_000, 40_000, 80_000,
  ]);
});

test('the wait between attempts is capped at an hour, whatever the jitter', () => {
  for (const random of [0, 0.5, 0.999]) {
    expect(retryDelayMs(s, 11, null, random)).toBeLessThanOrEqual(3_600_000);
    expect(retryDelayMs(s, 40, null, random)).toBeLessThanOrEqual(3_600_000);
  }
  expect(retryDelayMs(s, 40, null, MIDDLE)).toBe(3_600_000);
});

test('jitter spreads a wait by ±20 %', () => {
  expect(retryDelayMs(s, 3, null, 0)).toBe(16_000);
  expect(retryDelayMs(s, 3, null, 1)).toBe(24_000);
});

test("a receiver's Retry-After is honoured when it asks for longer, and ignored when shorter", () => {
  expect(retryDelayMs(s, 1, 120, MIDDLE)).toBe(120_000);
  expect(retryDelayMs(s, 3, 1, MIDDLE)).toBe(20_000);
});

test('the schedule of three days holds about 80 attempts, the last ones an hour apart', () => {
  let elapsed = 0;
  let attempts = 1;
  while (elapsed + retryDelayMs(s, attempts, null, MIDDLE) <= s.giveUpAfterSeconds * 1000) {
    elapsed += retryDelayMs(s, attempts, null, MIDDLE);
    attempts += 1;
  }
  expect(attempts).toBeGreaterThan(70);
  expect(attempts).toBeLessThan(85);
});

test('waiting for a busy slot is short', () => {
  expect(busyDelayMs(0)).toBe(1000);
  expect(busyDelayMs(0.999)).toBeLessThan(2000);
});
