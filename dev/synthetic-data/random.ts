/**
 * Seeded randomness for the synthetic generator: mulberry32 for uniforms, Box-Muller for normals.
 * Each part of the generator draws from its own named stream, so adding a draw to one part (say,
 * workouts) does not reshuffle the numbers of another (say, sleep) for the same seed.
 */

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SeededRandom {
  private readonly next: () => number;

  constructor(seed: number, stream: string) {
    this.next = mulberry32(Math.imul(seed | 0, 0x9e3779b1) ^ fnv1a(stream));
  }

  /** Uniform in [0, 1). */
  uniform(): number {
    return this.next();
  }

  normal(mean = 0, sd = 1): number {
    const u1 = 1 - this.next(); // (0, 1]: log(0) would be -Infinity
    const u2 = this.next();
    return mean + sd * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  /** exp(normal(log(median), sigma)): skewed positive quantities such as triglycerides or ferritin. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(this.normal(0, sigma));
  }

  /** Integer in [min, max], both included. */
  integer(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** `count` distinct items, in their original order (partial Fisher-Yates). */
  sample<T>(items: readonly T[], count: number): T[] {
    const indices = items.map((_, i) => i);
    const n = Math.min(count, indices.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.next() * (indices.length - i));
      [indices[i], indices[j]] = [indices[j], indices[i]];
    }
    return indices
      .slice(0, n)
      .sort((a, b) => a - b)
      .map((i) => items[i]);
  }

  /**
   * A stationary AR(1) series with unit variance: x[t] = phi * x[t-1] + sqrt(1 - phi²) * noise.
   * `phi` is the day-to-day carry-over (a bad night tends to follow a bad night).
   */
  ar1(length: number, phi: number): number[] {
    const series: number[] = [];
    let x = this.normal();
    for (let t = 0; t < length; t++) {
      series.push(x);
      x = phi * x + Math.sqrt(1 - phi * phi) * this.normal();
    }
    return series;
  }
}
