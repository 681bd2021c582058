/**
 * Reading Terra's JSON, which is untrusted: every field may be absent, null or of another type than the
 * spec says. A field that is null or absent is simply not there; one of the wrong type is left out with a
 * SkippedField naming its path. Nothing here ever puts a value in a reason.
 */
import { numberProblem } from '../../health-data/validate';
import { parseIsoDate, type FieldSpec } from '../../../contracts/health-records';
import type { SkippedField } from './types';

export type JsonObject = Record<string, unknown>;
/** A step of a path into the event: an object's key or an array's index. */
export type Key = string | number;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The skipped fields of one event, each path and reason once (an object of the wrong type is met by several fields). */
export class Skips {
  readonly list: SkippedField[] = [];
  private readonly seen = new Set<string>();

  add(path: string, reason: string): void {
    const id = `${path}\n${reason}`;
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.list.push({ path, reason });
  }
}

/** One record of an event's data array (`data[2]`), read field by field. */
export class RecordReader {
  constructor(
    readonly record: JsonObject,
    readonly path: string,
    readonly skips: Skips,
  ) {}

  pathOf(keys: readonly Key[]): string {
    return keys.reduce<string>(
      (path, key) => (typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`),
      this.path,
    );
  }

  /** The value at `keys`; undefined when it, or an object on the way, is null or absent. */
  get(keys: readonly Key[]): unknown {
    let value: unknown = this.record;
    for (const [i, key] of keys.entries()) {
      if (value === null || value === undefined) return undefined;
      if (typeof key === 'number' ? !Array.isArray(value) : !isObject(value)) {
        this.skips.add(this.pathOf(keys.slice(0, i)), typeof key === 'number' ? 'is not an array' : 'is not an object');
        return undefined;
      }
      value = (value as Record<Key, unknown>)[key];
    }
    return value ?? undefined;
  }

  /** A number at `keys`, or undefined when absent; one of another type (or not finite) is skipped. */
  number(keys: readonly Key[]): number | undefined {
    const value = this.get(keys);
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.skips.add(this.pathOf(keys), 'is not a number');
      return undefined;
    }
    return value;
  }

  /** A non-empty string at `keys`, or undefined when absent; one of another type is skipped. */
  text(keys: readonly Key[]): string | undefined {
    const value = this.get(keys);
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value === '') {
      this.skips.add(this.pathOf(keys), 'is not a non-empty string');
      return undefined;
    }
    return value;
  }
}

/**
 * A value for a column with the given spec: rounded where the column is integer, then checked against the
 * accepted range; the reason it is refused (naming the column, never the value) otherwise.
 */
export function acceptedValue(
  column: string,
  spec: FieldSpec,
  value: number,
): { ok: true; value: number } | { ok: false; reason: string } {
  const stored = spec.integer ? Math.round(value) : value;
  const problem = numberProblem(spec, stored);
  return problem === null ? { ok: true, value: stored } : { ok: false, reason: `${column} ${problem}` };
}

/**
 * The calendar day of a Terra time, as sent: its first 10 characters. Terra sends the user's local time with
 * its offset where it can, so converting to UTC first would move a record to another day.
 */
export function dayOf(time: string): string | null {
  const day = time.slice(0, 10);
  return /^\d{4}-\d{2}-\d{2}(T|$)/.test(time) && parseIsoDate(day) ? day : null;
}

const TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A Terra time (ISO 8601, often with microseconds) as an instant. A time without an offset is the user's
 * local time in an unknown zone; it is read as UTC, which shifts it by at most a day's offset.
 */
export function instantOf(time: string): { ms: number; iso: string } | null {
  const match = TIME.exec(time);
  if (!match || dayOf(time) === null) return null;
  const [, base, fraction = '0', zone = 'Z'] = match;
  const offset = /^[+-]\d{4}$/.test(zone) ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone.toUpperCase();
  const ms = Date.parse(`${base}.${fraction.padEnd(3, '0').slice(0, 3)}${offset}`);
  return Number.isNaN(ms) ? null : { ms, iso: new Date(ms).toISOString() };
}
