/**
 * How close a stated number must be to a reference to trace to it (docs/design.md, "The fact-check"):
 * within 2 % of the reference, and never closer than 0.05, so small values such as correlations are
 * not held to a hair's breadth. The fact-check and the reproduction gate judge with it on the server;
 * the SDK exports it, so a client (the console) marks the answer's numbers by the same rule.
 *
 * Kept free of zod (like ./event-catalog.ts), so the SDK can bundle it.
 */
export const FACT_TOLERANCE = { relative: 0.02, absolute: 0.05 } as const;

/** Whether `value` traces to `reference`: within the tolerance of it, or of its magnitude ("a 12 % drop" for -0.12). */
export function withinTolerance(value: number, reference: number): boolean {
  const tolerance = Math.max(FACT_TOLERANCE.relative * Math.abs(reference), FACT_TOLERANCE.absolute);
  return Math.abs(value - reference) <= tolerance || Math.abs(value - Math.abs(reference)) <= tolerance;
}
