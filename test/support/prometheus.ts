/**
 * Reading a Prometheus scrape in tests: the text exposition format (version 0.0.4) parsed into samples,
 * as a scraper reads it, so a test asserts on values rather than on lines of text.
 */

export interface Sample {
  /** As exposed: a histogram's `_bucket`, `_sum` and `_count` are samples of their own. */
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function unescapeLabelValue(raw: string): string {
  return raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function parseLabels(raw: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < raw.length) {
    const match = LABEL.exec(raw);
    if (!match) throw new Error(`malformed labels in: ${line}`);
    labels[match[1]] = unescapeLabelValue(match[2]);
  }
  return labels;
}

function parseValue(raw: string, line: string): number {
  // As Prometheus reads them (Go's ParseFloat): any case, prom-client writes `Nan`.
  const special = raw.toLowerCase();
  if (special === '+inf' || special === 'inf') return Infinity;
  if (special === '-inf') return -Infinity;
  if (special === 'nan') return NaN;
  const value = Number(raw);
  if (Number.isNaN(value)) throw new Error(`malformed value in: ${line}`);
  return value;
}

/** Every sample of a scrape; a line that is neither a comment nor a sample fails the parse. */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = SAMPLE_LINE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    samples.push({ name: match[1], labels: parseLabels(match[2] ?? '', line), value: parseValue(match[3], line) });
  }
  return samples;
}

/** Scrapes `url` as Prometheus does and parses what it serves. */
export async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain; version=0.0.4')) throw new Error(`${url} served ${type}`);
  return parsePrometheusText(await res.text());
}

/** The sum of the samples named `name` whose labels include `labels`; 0 when there is none. */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Whether any sample is named `name` (with these labels). */
export function has(samples: Sample[], name: string, labels: Record<string, string> = {}): boolean {
  return samples.some(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
}
