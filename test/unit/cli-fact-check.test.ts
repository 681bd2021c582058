/**
 * The CLI's fact-check line: what the binding check did with each number that did not trace (written
 * again without it, its sentence removed, hedged), and the older events that carry issues only.
 */
import { formatBlock } from '../../cli/src/view/blocks';
import { TurnView } from '../../cli/src/view/model';
import { PLAIN } from '../../cli/src/view/style';
import type { TurnStreamEvent } from '../../sdk/src/events';

const NO_TRANSCRIPTS = { text: () => '' };

function factCheckLines(data: Record<string, unknown>): string {
  const event = { id: 9, type: 'fact_check', ...data } as TurnStreamEvent;
  const [block] = new TurnView().apply(event, NO_TRANSCRIPTS);
  return formatBlock(block, PLAIN);
}

test('a number the repair left out, one whose sentence was removed, and one the rewrite added', () => {
  const lines = factCheckLines({
    numbers_checked: 4,
    issues: [
      { value: 58, severity: 'warn' },
      { value: 45, severity: 'warn' },
    ],
    repairs: {
      resynthesised: true,
      removed: [
        { value: 45, sentence: 'You slept 45 minutes less.', action: 'dropped_sentence' },
        { value: 12, sentence: 'That is 12 bpm.', action: 'hedged_number' },
      ],
    },
  });
  expect(lines.split('\n')).toEqual([
    '⚠ fact check: 58 was not traced to the fact sheet; the answer was written again without it',
    '⚠ fact check: 45 was not traced to the fact sheet; its sentence was removed from the answer',
    '⚠ fact check: 12 was not traced to the fact sheet; it was replaced by a hedge in the answer',
  ]);
});

test('a clean check, and an event from before the check was binding', () => {
  const clean = { numbers_checked: 2, issues: [], repairs: { resynthesised: false, removed: [] } };
  expect(factCheckLines(clean)).toBe('✓ fact check: every number in the answer was traced');
  expect(factCheckLines({ issues: [{ value: 42, severity: 'warn' }] })).toBe(
    '⚠ fact check: 42 in the answer was not traced to the fact sheet',
  );
});
