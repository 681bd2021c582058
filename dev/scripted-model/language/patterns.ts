/**
 * The agents each routing pattern brings in (docs/design.md#collaboration-patterns: the six collaboration
 * patterns).
 */
import type { RoutingPattern } from './understanding';

type SpecialistId = 'data_science' | 'domain_expert' | 'health_coach';

export interface PatternRoute {
  /** null: no specialist — the turn gets a conversational reply (or the Investigator, for `investigate`). */
  main: SpecialistId | null;
  supporting: SpecialistId[];
}

export const PATTERN_ROUTES: Record<RoutingPattern, PatternRoute> = {
  knowledge: { main: 'domain_expert', supporting: [] },
  my_data: { main: 'data_science', supporting: [] },
  my_data_judged: { main: 'domain_expert', supporting: ['data_science'] },
  coaching: { main: 'health_coach', supporting: [] },
  coaching_on_my_data: { main: 'health_coach', supporting: ['data_science'] },
  coaching_with_context: { main: 'health_coach', supporting: ['data_science', 'domain_expert'] },
  investigate: { main: null, supporting: [] },
  conversation: { main: null, supporting: [] },
  unavailable: { main: null, supporting: [] },
  unclear: { main: null, supporting: [] },
};
