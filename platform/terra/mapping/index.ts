/**
 * Terra's webhook events to Amy's rows (docs/terra-mapping.md): pure functions, no I/O and no clock. The
 * receiver stores each provider's contributions and combines them per day with combineDay and
 * chooseWorkouts; lab rows go through labRowsFromInput like any client's.
 */
export type { DayContribution, MappedTerraData, ProfileContribution, SkippedField, WorkoutContribution } from './types';
export { TerraMappingError } from './types';
export { mapTerraDataEvent } from './data-event';
export { combineDay, chooseWorkouts } from './combine';
export { PROVIDER_PRIORITY, compareProviders } from './providers';
export { mapLabReport } from './labs';
export type { LabRowInput } from '../../health-data/validate';
