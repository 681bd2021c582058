/** How numbers and times read on the console. */

export function formatDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Model calls cost fractions of a cent: four decimals, as the API reports them. */
export function formatCost(usd) {
  return usd === null || usd === undefined ? '—' : `$${usd.toFixed(4)}`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const date = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

export function formatDateTime(iso) {
  return dateTime.format(new Date(iso));
}

export function formatDate(iso) {
  return date.format(new Date(iso));
}

/** A fact-sheet value as an answer would quote it (63.01, 8432.5, 0.07341); the exact value is in its tooltip. */
export function formatFactValue(value) {
  return String(Math.abs(value) >= 1 ? Number(value.toFixed(2)) : Number(value.toPrecision(4)));
}
