/**
 * The live tail a terminal redraws in place under the finished blocks: each running agent with a
 * spinner and its timer, then the last rows of the text it is writing, then the findings whose gates
 * are still coming in. Every row fits the terminal's width, so the rows drawn are the rows to erase.
 */
import { findingLine } from './blocks';
import type { FindingCheck, RunningAgent } from './model';
import type { Style } from './style';
import { terminalText } from '../terminal-text';
import { fitLine, lastRows } from './text';

const SPINNER = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
const SPINNER_FRAME_MS = 100;
/** Rows of an agent's text kept in view: enough to follow the sentence being written. */
const TEXT_ROWS = 2;

export interface LiveState {
  runningAgents(): RunningAgent[];
  pendingFindings(): FindingCheck[];
}

export function formatTail(
  live: LiveState,
  now: number,
  size: { width: number; height: number },
  style: Style,
): string[] {
  // One column spare: a row that fills the width exactly makes some terminals wrap early.
  const width = Math.max(10, size.width - 1);
  const spinner = SPINNER[Math.floor(now / SPINNER_FRAME_MS) % SPINNER.length];
  const rows: string[] = [];
  for (const run of live.runningAgents()) {
    rows.push(`${style.cyan(spinner)} ${style.bold(run.agent)} ${style.dim(formatTimer(now - run.startedAt))}`);
    for (const row of lastRows(terminalText(run.text), width - 4, TEXT_ROWS)) rows.push(style.dim(`    ${row}`));
  }
  for (const finding of live.pendingFindings()) rows.push(findingLine(finding, style, true));
  // Rows above the top of the screen cannot be reached by cursor-up: keep the newest that fit.
  return rows.slice(-Math.max(1, size.height - 1)).map((row) => fitLine(row, width));
}

/** Whole seconds while short, minutes after: a timer that ticks visibly without jittering. */
function formatTimer(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}
