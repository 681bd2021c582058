/**
 * The Investigator's last stage (`augmentBriefingWithVerdicts`, docs/design.md#hypothesis-investigator): the
 * model's briefing is followed by what was actually tested and survived, written here rather than by the model,
 * so the verdicts and effect sizes the user reads are the validated ones, with the numbers exactly as in the
 * findings (which are the Fact Sheet's, so the fact-check traces them). Rejected findings are not listed; when
 * nothing survived, the note says the patterns noticed may be noise.
 */
import type { GateVerdict } from '../../../contracts/findings';
import { numbersText, type BriefingFinding } from './prompt';

const AUTO_TESTED_HEADING = '_Auto-tested findings:_';

const MARKER: Record<Exclude<GateVerdict, 'rejected'>, { symbol: string; label: string }> = {
  validated: { symbol: '✓', label: 'validated' },
  conditional: { symbol: '~', label: 'conditional, a preliminary signal' },
};

/**
 * A count in words: the note is our own sentence, not a measurement, and a digit in it would be a
 * number the binding fact-check finds in no Fact Sheet.
 */
const COUNT_WORDS: Record<number, string> = { 2: 'two', 3: 'three', 4: 'four', 5: 'five' };

export function augmentBriefingWithVerdicts(briefing: string, tested: readonly BriefingFinding[]): string {
  const text = briefing.trim();
  return `${text ? `${text}\n\n` : ''}${verdictsNote(tested)}`;
}

/** What follows the model's briefing, as written (`briefing`), so that the two read as one answer. */
export function verdictsAfter(briefing: string, tested: readonly BriefingFinding[]): string {
  const separator =
    briefing.trim() === '' ? '' : briefing.endsWith('\n\n') ? '' : briefing.endsWith('\n') ? '\n' : '\n\n';
  return separator + verdictsNote(tested);
}

/** The note of what was tested and survived (or that nothing did). */
function verdictsNote(tested: readonly BriefingFinding[]): string {
  const surviving = tested.filter(
    (t): t is BriefingFinding & { verdict: Exclude<GateVerdict, 'rejected'> } => t.verdict !== 'rejected',
  );
  if (surviving.length === 0) {
    const count = COUNT_WORDS[tested.length] ? `${COUNT_WORDS[tested.length]} ` : '';
    const note =
      tested.length === 0
        ? 'no hypothesis could be tested on your data, so the patterns noticed above are unconfirmed and may be noise.'
        : tested.length === 1
          ? 'the one tested hypothesis did not survive validation, so the patterns noticed above may be noise.'
          : `none of the ${count}tested hypotheses survived validation, so the patterns noticed above may be noise.`;
    return `${AUTO_TESTED_HEADING} ${note}`;
  }
  const lines = surviving.map(
    ({ finding, verdict }) =>
      `- ${MARKER[verdict].symbol} ${finding.claim} (${MARKER[verdict].label}): ${numbersText(finding.numbers)}`,
  );
  return `${AUTO_TESTED_HEADING}\n${lines.join('\n')}`;
}
