/** Text helpers shared by the renderers: measuring, cutting and wrapping without breaking colour codes. */
/* eslint-disable no-control-regex -- finding terminal control codes is what these expressions are for */

const SGR = /\x1b\[[0-9;]*m/y;

/** Visible characters, colour codes not counted. */
export function visibleLength(line: string): number {
  return [...line.replace(/\x1b\[[0-9;]*m/g, '')].length;
}

/** At most `width` visible characters, ending in `…` when cut; colour codes are kept and closed. */
export function fitLine(line: string, width: number): string {
  if (visibleLength(line) <= width) return line;
  let out = '';
  let visible = 0;
  for (let i = 0; i < line.length;) {
    SGR.lastIndex = i;
    const code = SGR.exec(line);
    if (code) {
      out += code[0];
      i += code[0].length;
      continue;
    }
    const char = String.fromCodePoint(line.codePointAt(i)!);
    if (visible === width - 1) break;
    out += char;
    visible++;
    i += char.length;
  }
  return `${out}…${out.includes('\x1b[') ? '\x1b[0m' : ''}`;
}

/** The last `rows` rows of `text` wrapped at `width`: the end of what is being written. */
export function lastRows(text: string, width: number, rows: number): string[] {
  const out: string[] = [];
  const lines = text.trimEnd().split('\n');
  for (let i = lines.length - 1; i >= 0 && out.length < rows; i--) {
    const chars = [...lines[i]];
    if (chars.length === 0) continue;
    const wrapped: string[] = [];
    for (let at = 0; at < chars.length; at += width) wrapped.push(chars.slice(at, at + width).join(''));
    out.unshift(...wrapped.slice(-(rows - out.length)));
  }
  return out;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

export const formatUsd = (usd: number) => `$${usd.toFixed(4)}`;
