/**
 * The gates in the order they run and are reported in: `reproduction` (every number of the finding
 * recomputed by our own code from the user's rows, see checks/reproduction.ts), then the seven
 * statistical gates (docs/design.md, "The seven gates"), in the order the product contract lists them.
 *
 * Kept free of zod (like ./event-catalog.ts), so the SDK can bundle them for clients: the console's gates
 * table has a column per gate, in this order, headed by its label.
 */
export const GATE_NAMES = [
  'reproduction',
  'sample_size',
  'effect_vs_noise',
  'construct_validity',
  'bootstrap',
  'subgroup_consistency',
  'method_triangulation',
  'discriminative_power',
] as const;
export type GateName = (typeof GATE_NAMES)[number];

/** What a screen calls each gate. */
export const GATE_LABELS: Record<GateName, string> = {
  reproduction: 'Reproduced',
  sample_size: 'Sample size',
  effect_vs_noise: 'Effect vs noise',
  construct_validity: 'Construct validity',
  bootstrap: 'Bootstrap',
  subgroup_consistency: 'Subgroups',
  method_triangulation: 'Triangulation',
  discriminative_power: 'Discriminative power',
};
