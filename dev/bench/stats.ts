/** Order statistics for latency samples (milliseconds). */

export interface Summary {
  n: number;
  /** The best run: under a busy machine's extra delays, the steadiest estimate of a fixed amount of work. */
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/**
 * Nearest-rank percentile: always an observed sample, never an interpolation between two, so a p99
 * of 30 samples is honestly the worst one rather than a value nobody measured.
 */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no samples');
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    min: sorted[0],
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}

/** A wall-clock reading in milliseconds, sub-millisecond precise and comparable across this process. */
export const nowMs = () => performance.timeOrigin + performance.now();

export const formatMs = (ms: number) => `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms`;
