/**
 * Which provider's word counts when several say something about the same day or workout
 * (docs/terra-mapping.md#provider-priority). Devices worn day and night on the finger or wrist come first:
 * they measure resting heart rate, HRV and sleep continuously. Sports watches follow, then the wearables
 * that are more often worn by day only, then the platforms that gather a phone's and other apps' data
 * (Samsung Health, Apple Health, Google), whose steps count a phone in a pocket and whose values may be
 * another device's, copied.
 */
export const PROVIDER_PRIORITY: readonly string[] = [
  'OURA',
  'WHOOP',
  'GARMIN',
  'POLAR',
  'COROS',
  'SUUNTO',
  'FITBIT',
  'WITHINGS',
  'SAMSUNG',
  'APPLE',
  'GOOGLE',
];

const rank = (provider: string) => {
  const index = PROVIDER_PRIORITY.indexOf(provider.toUpperCase());
  return index === -1 ? PROVIDER_PRIORITY.length : index;
};

/**
 * Negative when `a` wins over `b`: the lower index of PROVIDER_PRIORITY, compared case-insensitively;
 * providers not in the list after all those in it, alphabetically.
 */
export function compareProviders(a: string, b: string): number {
  const byRank = rank(a) - rank(b);
  if (byRank !== 0) return byRank;
  const [upperA, upperB] = [a.toUpperCase(), b.toUpperCase()];
  return upperA < upperB ? -1 : upperA > upperB ? 1 : 0;
}
