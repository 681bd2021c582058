/**
 * docs/design.md's list of where this service differs from the product contract names every difference a
 * client would trip over (an audit found these unrecorded once), and its passages on whether workout
 * findings are validated agree.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const design = readFileSync(path.join(__dirname, '..', '..', 'docs', 'design.md'), 'utf8');
const start = design.indexOf('## Where this service differs from or goes beyond the original product contract');
const differences = design.slice(start, design.indexOf('\n## ', start + 1));

test.each([
  ['the step ids a client meets', /`rephrase` for\s+`rephrase_per_agent`/],
  ['include_biomarkers as applied', /`include_biomarkers: false` keeps the labs out of the whole turn/],
  ["the coach's anchors", /`result\.personal_anchors`/],
  ['the retry: hint of a stopping API process', /A `retry:` hint when an API process stops/],
  [
    '/v1/data/* as a push API, Terra received',
    /Health data is pushed to `\/v1\/data\/\*`, and Terra's arrives at `\/webhooks\/terra`/,
  ],
  ['immediate account deletion', /Account deletion is immediate/],
  ['what amy reset deletes', /`amy reset` deletes every memory entry/],
  ["completed_at before the turn's memory entries", /`completed_at` precedes the turn's memory entries/],
  ["per-agent cost_usd against the turn's", /Per-agent `cost_usd` does not add up to the turn's/],
  ['append-only deltas with step.retry as a signal', /`step\.retry`, an additive signal/],
  ['the check before a number is shown', /The fact-check binds, before anyone sees a number/],
])('the differences list records %s', (_what, pattern) => {
  expect(start).toBeGreaterThan(0);
  expect(differences).toMatch(pattern);
});

test('no passage says workout findings go unvalidated: they are in the checked path', () => {
  expect(design).not.toMatch(/workouts?[^.]*not (yet )?validated/i);
  expect(differences).toMatch(/Workouts and lab results are in the checked path/);
});
