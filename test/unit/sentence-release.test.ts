/**
 * The fact-check as an answer streams (checks/sentence-release.ts): text goes out a sentence at a time, once the
 * sentence has ended and its numbers trace; a sentence that does not trace stops the answer (`stop`) or is left
 * out (`drop`); what went out is never taken back, so the pieces concatenated are the answer. However the text is
 * cut into deltas, the same goes out.
 */
import { checkNumbers, UNVERIFIED_ANSWER, UNVERIFIED_NUMBER } from '../../checks/fact-check';
import { SentenceRelease, type OnUntraced } from '../../checks/sentence-release';

const references = { sheet: { 'ds-001.mean': 58.2, 'ds-001.n': 82, 'ds-001.window_days': 90 }, userMessage: '' };

/** Streams `deltas` through a release; returns what went out, piece by piece, and the release. */
function stream(deltas: string[], onUntraced: OnUntraced, released = '') {
  const release = new SentenceRelease(references, { onUntraced, released });
  const out = deltas.map((d) => release.push(d));
  out.push(release.end());
  return { out: out.filter((piece) => piece !== ''), release };
}

/** Every way of cutting `text` into two or three deltas. */
function cuts(text: string): string[][] {
  const out: string[][] = [[text]];
  for (let i = 1; i < text.length; i += 3) {
    out.push([text.slice(0, i), text.slice(i)]);
    for (let j = i + 5; j < text.length; j += 7) out.push([text.slice(0, i), text.slice(i, j), text.slice(j)]);
  }
  return out;
}

const TRACED = 'Your resting heart rate averaged 58.2 bpm over the last 90 days. That is from 82 nights.';
const UNTRACED = 'Compared with the month before, that is 140.7 bpm higher.';

test('a sentence goes out once it has ended and its numbers trace, not before', () => {
  const release = new SentenceRelease(references, { onUntraced: 'stop' });
  expect(release.push('Your resting heart rate averaged 5')).toBe('');
  expect(release.push('8.2 bpm over the last 90 days.')).toBe(''); // "90 days." may still be "90 days.5…"
  // The space after a sentence goes out with the next one: an answer never ends in whitespace.
  expect(release.push(' That')).toBe('Your resting heart rate averaged 58.2 bpm over the last 90 days.');
  expect(release.push(' is from 82 nights.')).toBe('');
  expect(release.end()).toBe(' That is from 82 nights.');
  expect(release.released).toBe(TRACED);
  expect(release.checked.map((t) => t.value)).toEqual([58.2, 90, 82]);
});

test('with stop, the first sentence that does not trace stops the answer: nothing of it or after it goes out', () => {
  for (const deltas of cuts(`${TRACED} ${UNTRACED} And more at 58.2 bpm.`)) {
    const { out, release } = stream(deltas, 'stop');
    expect(out.join('')).toBe(TRACED);
    expect(release.released).toBe(TRACED);
    expect(release.done()).toBe(true);
    expect(release.stopped?.sentence.trim()).toBe(UNTRACED);
    expect(release.stopped?.untraced.map((t) => t.value)).toEqual([140.7]);
  }
});

test('with drop, a sentence that does not trace is left out and the answer goes on; what went out is the answer', () => {
  for (const deltas of cuts(`${UNTRACED} ${TRACED}`)) {
    const { out, release } = stream(deltas, 'drop');
    expect(out.join('')).toBe(TRACED);
    expect(release.released).toBe(TRACED);
    expect(release.removed).toEqual([{ value: 140.7, sentence: UNTRACED, action: 'dropped_sentence' }]);
    expect(checkNumbers(release.released, references).untraced).toEqual([]);
  }
});

test('a list marker goes out with its sentence, or with it is left out', () => {
  const text = 'Two things:\n1. The mean was 58.2 bpm.\n2. The peak was 140.7 bpm.\n3. It held over 90 days.';
  for (const deltas of cuts(text)) {
    const { out } = stream(deltas, 'drop');
    expect(out.join('')).toBe('Two things:\n1. The mean was 58.2 bpm.\n3. It held over 90 days.');
  }
});

test('an answer that would say nothing gets its first dropped sentence back hedged; with nothing at all, the unverified answer', () => {
  const hedged = stream([UNTRACED], 'drop');
  expect(hedged.release.released).toBe(`Compared with the month before, that is ${UNVERIFIED_NUMBER} higher.`);
  expect(hedged.release.removed).toEqual([{ value: 140.7, sentence: UNTRACED, action: 'hedged_number' }]);
  expect(stream([], 'drop').release.released).toBe(UNVERIFIED_ANSWER);
});

test('an answer that goes on from text already out (a repair, a retried attempt) judges its numbers in place and adds to it', () => {
  const before = 'Your resting heart rate averaged 58.2 bpm over the last 90 days. ';
  const { out, release } = stream([`${UNTRACED} That is from 82 nights.`], 'drop', before);
  expect(out.join('')).toBe('That is from 82 nights.');
  expect(release.released).toBe(TRACED);
});

test('a writing that goes on from text already out keeps the space its first words bring, however it is cut', () => {
  const before = 'Your resting heart rate averaged 58.2 bpm over the last 90 days.';
  for (const deltas of cuts(' That is from 82 nights.\n\nKeep it up!')) {
    const { out, release } = stream(deltas, 'drop', before);
    expect(out.join('')).toBe(' That is from 82 nights.\n\nKeep it up!');
    expect(release.released).toBe(`${before} That is from 82 nights.\n\nKeep it up!`);
  }
});
