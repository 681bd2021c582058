/** A turn's workflow history as Temporal stores it, for suites that read one raw (without the codec). */
import type { Client } from '@temporalio/client';

export type TurnHistory = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>;

type StoredPayload = { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null };

/** Every payload in the history, wherever it sits (inputs, results, summaries, failures' details). */
export function historyPayloads(history: TurnHistory): StoredPayload[] {
  const out: StoredPayload[] = [];
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    if (Array.isArray(value)) return value.forEach(walk);
    const record = value as Record<string, unknown>;
    if (record.metadata && record.data instanceof Uint8Array) out.push(record as StoredPayload);
    Object.values(record).forEach(walk);
  };
  walk(history);
  return out;
}
