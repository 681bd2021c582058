/**
 * An ISO-8601 instant Postgres can compare a timestamptz with. `z.iso.datetime` admits the year 0000
 * and offsets up to ±23:59; Postgres refuses both ("date/time field value out of range", "time zone
 * displacement out of range"), so a well-formed query or cursor would be a 500. Real offsets lie
 * within -12:00 and +14:00, and Postgres takes up to ±15:59.
 */
export const POSTGRES_INSTANT_PROBLEM = 'must be an instant from the year 0001 on, with an offset of at most ±15:59';

export function isPostgresInstant(value: string): boolean {
  if (value.startsWith('0000')) return false;
  const offset = /[+-](\d{2})(?::?\d{2})?$/.exec(value);
  return !offset || Number(offset[1]) <= 15;
}
