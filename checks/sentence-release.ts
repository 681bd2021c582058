/**
 * The binding fact-check as an answer streams (docs/design.md#the-fact-check): the answer goes out a sentence at
 * a time, each once it has ended and every number in it traces, by the same rule and against the same references
 * as ./fact-check.ts. No number reaches a client before the check has traced it; what goes out is never taken
 * back, so the answer's channel, concatenated, is the answer.
 *
 * A sentence that does not trace is held back, and then, as its writer chose:
 * - `stop`: nothing more goes out, and the writer repairs from there (synthesis writes on from what went out,
 *   told what was wrong: ../activities/steps/synthesis);
 * - `drop`: it is left out, and the answer goes on with the next sentence.
 * An answer that would end with nothing said gets its first dropped sentence back with its numbers replaced by a
 * hedge, or, with nothing to say at all, `UNVERIFIED_ANSWER`, as `removeUntraced` does for a whole answer.
 *
 * A sentence ends where ./fact-check.ts's `sentenceSpans` ends one; the last one is judged when more text shows it
 * has ended, or at `end()`. A list marker on its own ("1. ") goes out with the sentence after it, or not at all.
 */
import type { FactCheckRemoval } from '../contracts/turn';
import {
  checkNumbers,
  hasWords,
  sentenceSpans,
  UNVERIFIED_ANSWER,
  withHedges,
  type FactCheckReferences,
} from './fact-check';
import type { NumberToken } from './numbers';

export type OnUntraced = 'stop' | 'drop';

/** The sentence that stopped an answer written with `stop`, and its numbers that trace to nothing. */
export interface StoppedAt {
  sentence: string;
  untraced: NumberToken[];
}

export class SentenceRelease {
  /** Everything released so far, what the answer held before this writing (`options.released`) included. */
  released: string;
  /** The quantities read in the sentences judged, in order. */
  readonly checked: NumberToken[] = [];
  /** Those that traced to nothing (each in a sentence held back). */
  readonly untraced: NumberToken[] = [];
  readonly removed: FactCheckRemoval[] = [];
  stopped: StoppedAt | null = null;
  private held = '';
  /** The whitespace after the last sentence that went out: it goes out with the next one. */
  private space = '';
  /** The whitespace since the last sentence judged, in full: consecutive breaks add up ("\n" and "\n" are a paragraph). */
  private run = '';
  /** Sentences left out, with their untraced numbers: the first comes back hedged if nothing else is said. */
  private readonly dropped: Array<{ sentence: string; untraced: NumberToken[] }> = [];

  constructor(
    private readonly references: FactCheckReferences,
    private readonly options: { released?: string; onUntraced: OnUntraced },
  ) {
    this.released = options.released ?? '';
  }

  /** True once a sentence stopped the answer (`stop`): the writer may stop writing. */
  done(): boolean {
    return this.stopped !== null;
  }

  /** Nothing to put before the next sentence: nothing went out yet, or what did ends in whitespace of its own. */
  private separated(): boolean {
    return this.released === '' || /\s$/.test(this.released);
  }

  /** Takes the writer's next text; returns what may go out now. */
  push(delta: string): string {
    if (this.stopped) return '';
    this.held += delta;
    return this.judgeEnded(false);
  }

  /** The writer is done: the last sentence is judged, and an answer with nothing said gets its hedge. */
  end(): string {
    if (this.stopped) return '';
    let out = this.judgeEnded(true);
    if (!hasWords(this.released)) {
      const first = this.dropped[0];
      const hedged = first ? withHedges(first.sentence, first.untraced) : '';
      const fallback =
        hedged && checkNumbers(hedged, this.references).untraced.length === 0 ? hedged : UNVERIFIED_ANSWER;
      if (first) {
        for (const entry of this.removed) if (entry.sentence === first.sentence) entry.action = 'hedged_number';
      }
      const lead = this.separated() ? '' : this.space || ' ';
      out += lead + fallback;
      this.released += lead + fallback;
    }
    return out;
  }

  /** Judges each sentence known to have ended (every one, at the end), in order; returns what went out. */
  private judgeEnded(atEnd: boolean): string {
    const spans = sentenceSpans(this.held);
    let out = '';
    let unit = '';
    let consumed = 0;
    for (const [i, span] of spans.entries()) {
      const piece = this.held.slice(span.start, span.end);
      // The last piece may still grow, but for a line break, which ends it for sure.
      if (!atEnd && i === spans.length - 1 && piece !== '\n') break;
      unit += piece;
      consumed = span.end;
      // A list marker alone waits for its sentence.
      if (!hasWords(unit) && unit.trim() !== '' && piece !== '\n') continue;
      const verdict = this.judge(unit);
      unit = '';
      if (verdict === 'stopped') {
        this.held = '';
        return out;
      }
      out += verdict;
    }
    // A marker with nothing after it, at the end, goes out only with words: never.
    this.held = atEnd ? '' : this.held.slice(consumed - unit.length);
    return out;
  }

  /**
   * One sentence (with any marker before it and the whitespace after it): what of it goes out now, or 'stopped'.
   * The whitespace after a sentence goes out with the next one, so an answer never ends in it and a sentence left
   * out leaves no double space; of a line break and a space, the line break is kept.
   */
  private judge(unit: string): string | 'stopped' {
    const body = unit.trimEnd();
    const after = unit.slice(body.length);
    if (body === '') {
      this.run += after;
      this.space = keepBreak(this.space, this.run);
      return '';
    }
    // Whitespace before a sentence (a continuation's first words follow a space) joins the space before it, so
    // that a sentence is recorded as written and an answer never starts with whitespace.
    const sentence = body.trimStart();
    this.run += body.slice(0, body.length - sentence.length);
    this.space = keepBreak(this.space, this.run);
    // Judged in place, after what went out, so that a number reads as it does in the whole answer.
    const lead = this.separated() ? '' : this.space;
    const before = this.released.length + lead.length;
    const tokens = checkNumbers(this.released + lead + sentence, this.references);
    const own = (t: NumberToken) => t.start >= before;
    this.checked.push(...tokens.checked.filter(own));
    const untraced = tokens.untraced.filter(own).map((t) => ({ ...t, start: t.start - before, end: t.end - before }));
    if (untraced.length === 0) {
      this.released += lead + sentence;
      this.space = after;
      this.run = after;
      return lead + sentence;
    }
    this.untraced.push(...tokens.untraced.filter(own));
    if (this.options.onUntraced === 'stop') {
      this.stopped = { sentence, untraced };
      return 'stopped';
    }
    this.dropped.push({ sentence, untraced });
    for (const token of untraced) this.removed.push({ value: token.value, sentence, action: 'dropped_sentence' });
    this.space = keepBreak(this.space, after);
    this.run = after;
    return '';
  }
}

/** Of two runs of whitespace that now meet, the one with more line breaks (a paragraph outlives a space). */
function keepBreak(a: string, b: string): string {
  const breaks = (ws: string) => ws.split('\n').length;
  if (a === '') return b;
  return breaks(b) > breaks(a) ? b : a;
}
