export default async function globalTeardown() {
  const stoppers = (globalThis as { __amyStoppers?: Array<() => Promise<void>> }).__amyStoppers ?? [];
  for (const stop of stoppers.reverse()) await stop();
}
