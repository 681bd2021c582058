/**
 * Finished blocks as text, the same for a terminal and for plain output (colour aside): each block is
 * written once, so everything worth keeping in the scrollback or a log is here. The model hands over
 * blocks already terminal-safe (../terminal-text.ts); free text is passed through it here again, as
 * one line where the layout needs one.
 */
import type { FactEntry, PersonalAnchorEntry } from '@amy/sdk';
import { GATE_NAMES } from '../../../contracts/findings';
import { ownValue } from '../../../contracts/own-keys';
import { isRejected, type Block, type FindingCheck } from './model';
import type { Style } from './style';
import { terminalLine, terminalText } from '../terminal-text';
import { formatDuration, formatUsd } from './text';

const INDENT = '  ';

export function formatBlock(block: Block, style: Style): string {
  switch (block.kind) {
    case 'turn-started':
      return style.dim(`● ${block.turnId} started`);
    case 'agent-started':
      return `${style.cyan('▸')} ${style.bold(block.agent)} ${terminalLine(block.question)}`;
    case 'agent-completed':
      return agentCompleted(block, style);
    case 'step-retry':
      return style.yellow(`↻ ${block.step} runs again (attempt ${block.attempt}): ${terminalLine(block.reason)}`);
    case 'validator-started':
      return `${style.bold('validator')} ${style.dim(`gates: ${GATE_NAMES.map((g) => g.replaceAll('_', ' ')).join(' · ')}`)}`;
    case 'finding':
      return findingLine(block.finding, style);
    case 'fact-check':
      if (factCheckValues(block).length === 0) {
        return `${style.green('✓')} fact check: every number in the answer was traced`;
      }
      return factCheckValues(block)
        .map((value) => style.yellow(`⚠ fact check: ${factCheckIssue(value, block.repairs)}`))
        .join('\n');
    case 'cost-warning':
      return style.yellow(
        `⚠ this turn has cost ${formatUsd(block.costUsd)}, above the ${formatUsd(block.thresholdUsd)} warning threshold`,
      );
    case 'completed':
      return completed(block, style);
    case 'failed': {
      const { error } = block;
      const what = error.code === 'cancelled' ? 'The turn was cancelled' : 'The turn failed';
      const request = error.request_id ? `, request ${error.request_id}` : '';
      return [
        style.red(`✗ ${what}: ${terminalLine(error.message)} (${error.code}${request})`),
        style.dim(
          `${block.turnId} · cost ${formatUsd(block.costUsd)}${block.fromSnapshot ? ' · from the stored turn' : ''}`,
        ),
      ].join('\n');
    }
    case 'retried':
      return style.yellow(`↻ the turn was retried (attempt ${block.attempt}): it resumes at the step that failed`);
    case 'notice':
      return style.dim(terminalLine(block.text));
  }
}

type FactCheckBlock = Extract<Block, { kind: 'fact-check' }>;

/** The numbers that did not trace: the first answer's, then any the rewritten answer still had. */
const factCheckValues = ({ values, repairs }: FactCheckBlock) => [
  ...values,
  ...new Set((repairs?.removed ?? []).map((r) => r.value).filter((value) => !values.includes(value))),
];

/** What became of an untraced number: the binding check never leaves one in the answer. */
function factCheckIssue(value: number, repairs: FactCheckBlock['repairs']): string {
  if (!repairs) return `${value} in the answer was not traced to the fact sheet`;
  const removed = repairs.removed.find((r) => r.value === value);
  const fate = removed
    ? removed.action === 'dropped_sentence'
      ? 'its sentence was removed from the answer'
      : 'it was replaced by a hedge in the answer'
    : 'the answer was written again without it';
  return `${value} was not traced to the fact sheet; ${fate}`;
}

function agentCompleted(block: Extract<Block, { kind: 'agent-completed' }>, style: Style): string {
  const header = `${style.green('✓')} ${style.bold(block.agent)} ${style.dim(`${formatDuration(block.durationMs)} · ${formatUsd(block.costUsd)}`)}`;
  // Synthesis narrates the answer itself, which the result shows; memory says what it wrote in its summary.
  if (block.agent === 'synthesis') return header;
  const text = terminalText(block.text).trim();
  if (text === '') return block.summary ? `${header} ${terminalLine(block.summary)}` : header;
  return [header, ...text.split('\n').map((line) => (line ? INDENT + line : line))].join('\n');
}

const GATE_MARK = { passed: '✓', failed: '✗', skipped: '–' } as const;

/**
 * One line per finding: a mark per gate in GATE_NAMES order (· for a gate that has not run), then the
 * Critic's verdict; `pending` while the live tail shows a finding whose review is still to come.
 */
export function findingLine(finding: FindingCheck, style: Style, pending = false): string {
  const marks = GATE_NAMES.map((gate) => {
    const verdict = finding.gates[gate];
    if (verdict === undefined) return style.dim('·');
    const mark = ownValue(GATE_MARK, verdict) ?? '?';
    return verdict === 'passed' ? style.green(mark) : verdict === 'failed' ? style.red(mark) : style.dim(mark);
  }).join(' ');
  const critic =
    finding.critic === null
      ? style.dim(pending ? 'critic …' : 'no critic')
      : finding.critic === 'accept'
        ? style.green('critic accept')
        : finding.critic === 'downgrade'
          ? style.yellow('critic downgrade')
          : style.red('critic reject');
  const id = isRejected(finding) ? style.red(`${finding.findingId} rejected`) : style.bold(finding.findingId);
  return `${INDENT}${id}  ${marks}  ${critic}  ${terminalLine(finding.claim)}`;
}

function completed(block: Extract<Block, { kind: 'completed' }>, style: Style): string {
  const { result } = block;
  const lines = ['', style.bold('Answer'), terminalText(result.answer).trim(), ''];
  if (result.fact_sheet.length > 0) {
    lines.push(style.bold('Fact sheet'), ...factSheetTable(result.fact_sheet, style), '');
  }
  // The coach's anchors are the user's own levels, not validated findings: a table of their own.
  const anchors = result.personal_anchors ?? [];
  if (anchors.length > 0) {
    lines.push(style.bold('Personal anchors (from your own data)'), ...factSheetTable(anchors, style), '');
  }
  const agents = result.agents_used.length > 0 ? result.agents_used.join(', ') : 'none (Amy answered directly)';
  lines.push(`${style.bold('Agents')} ${agents}`);
  const counts = result.validator;
  if (counts.findings_total > 0) {
    lines.push(
      `${style.bold('Validator')} ${counts.findings_validated} validated, ${counts.findings_conditional} conditional, ` +
        `${counts.findings_rejected} rejected of ${counts.findings_total}`,
    );
  }
  lines.push(
    `${style.bold('Cost')} ${formatUsd(result.cost_usd)} · ${formatDuration(result.duration_ms)}` +
      style.dim(` · ${block.turnId}${block.fromSnapshot ? ' · from the stored turn' : ''}`),
  );
  return lines.join('\n');
}

const FACT_COLUMNS = ['claim', 'value', 'unit', 'n', 'window'] as const;

/** Six significant digits: 63.0116 rather than 63.01162790697674 (`--json` has the exact number). */
const formatValue = (value: number) =>
  value.toLocaleString('en-US', { maximumSignificantDigits: 6, useGrouping: false });

/** A fact sheet's entries, or the personal anchors (which have no verdict), one row each. */
function factSheetTable(entries: Array<FactEntry | PersonalAnchorEntry>, style: Style): string[] {
  const rows = entries.map((entry) => [
    terminalLine(entry.claim) + ('verdict' in entry && entry.verdict === 'conditional' ? ' (conditional)' : ''),
    formatValue(entry.value),
    terminalLine(entry.unit ?? '–'),
    entry.n === null ? '–' : String(entry.n),
    terminalLine(entry.window ?? '–'),
  ]);
  const widths = FACT_COLUMNS.map((name, i) => Math.max(name.length, ...rows.map((row) => [...row[i]].length)));
  const line = (cells: readonly string[]) =>
    INDENT +
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat(widths[i] - [...cell].length)))
      .join('  ');
  return [style.dim(line(FACT_COLUMNS)), ...rows.map(line)];
}
