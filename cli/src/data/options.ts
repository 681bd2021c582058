/** The flags and words the `amy data` commands share, checked before any request is sent. */
import { UsageError } from '../errors';
import type { DataTable } from './rows-file';

const TABLES: readonly DataTable[] = ['daily', 'workouts', 'labs'];

/** `daily`, `workouts` or `labs`. */
export function parseTable(value: string, command: string): DataTable {
  const table = TABLES.find((t) => t === value);
  if (!table) {
    throw new UsageError(
      `Unknown table ${JSON.stringify(value)}: use daily, workouts or labs. Run \`amy ${command} --help\` for usage.`,
    );
  }
  return table;
}

/** A whole number from 1 (to `max`, when given); undefined when the flag was not given. */
export function parseCount(value: string | undefined, flag: string, command: string, max?: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && (max === undefined || n <= max))) {
    const range = max === undefined ? 'a whole number from 1' : `a whole number from 1 to ${max}`;
    throw new UsageError(
      `${flag} takes ${range}, not ${JSON.stringify(value)}. Run \`amy ${command} --help\` for usage.`,
    );
  }
  return n;
}

/** A number for the API to judge (`--height-cm 172.5`); undefined when the flag was not given. */
export function parseNumber(value: string | undefined, flag: string, command: string): number | undefined {
  if (value === undefined) return undefined;
  const n = value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(n)) {
    throw new UsageError(
      `${flag} takes a number, not ${JSON.stringify(value)}. Run \`amy ${command} --help\` for usage.`,
    );
  }
  return n;
}
