/**
 * Colour for a terminal, or none: with `NO_COLOR` (https://no-color.org) and whenever stdout is not a
 * terminal every helper returns its text unchanged, so the layout is the same either way.
 */
export interface Style {
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;

export const COLOUR: Style = {
  green: sgr(32, 39),
  red: sgr(31, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
  dim: sgr(2, 22),
  bold: sgr(1, 22),
};

const same = (text: string) => text;
export const PLAIN: Style = { green: same, red: same, yellow: same, cyan: same, dim: same, bold: same };

/** A terminal's style: `NO_COLOR` set to anything but the empty string turns colour off. */
export function terminalStyle(env: NodeJS.ProcessEnv): Style {
  return env.NO_COLOR ? PLAIN : COLOUR;
}
