/**
 * The no-data reply (docs/design.md#no-data-to-compute-from): decided from the snapshot's counts, it names the
 * empty tables and how to upload them, and holds no number the fact-check would have to trace.
 */
import { extractNumbers } from '../../checks/numbers';
import {
  ANALYSED_TABLES,
  NO_LABS_NOTE,
  INVESTIGATED_TABLES,
  asksAboutOwnLabs,
  lacksData,
  noDataReply,
  ownLabsNote,
} from '../../activities/runtime/no-data-reply';

const NONE = { daily: 0, workouts: 0, labs: 0, profile: false, labsWithheld: false };

describe('noDataReply', () => {
  test('with no data at all, every table and its upload route, and no number', () => {
    const reply = noDataReply(NONE, ANALYSED_TABLES);
    expect(reply).toMatch(/haven't uploaded any health data/);
    for (const route of [
      'POST /v1/data/daily',
      'POST /v1/data/workouts',
      'POST /v1/data/labs',
      'PUT /v1/data/profile',
    ]) {
      expect(reply).toContain(route);
    }
    expect(reply).toContain('amy data upload daily <file>');
    expect(reply).toContain('docs/api.md#health-data');
    expect(extractNumbers(reply)).toEqual([]);
  });

  test('with some tables filled, names the empty ones needed and what the user has', () => {
    const reply = noDataReply({ ...NONE, labs: 3, profile: true }, ANALYSED_TABLES);
    expect(reply).toContain('you have no daily summaries or workouts uploaded');
    expect(reply).toContain('What you have uploaded so far: lab results and profile.');
    expect(reply).toContain('POST /v1/data/workouts');
    expect(reply).not.toContain('POST /v1/data/labs');
    expect(extractNumbers(reply)).toEqual([]);
  });

  test('with the labs left out at the user’s request, they are neither missing nor to upload', () => {
    const withheld = { ...NONE, daily: 0, workouts: 0, labsWithheld: true };
    const reply = noDataReply(withheld, ANALYSED_TABLES);
    expect(reply).not.toMatch(/haven't uploaded any health data/);
    expect(reply).toContain('you have no daily summaries or workouts uploaded');
    expect(reply).toMatch(/lab results were left out of this turn at your request/);
    expect(reply).not.toContain('POST /v1/data/labs');
    expect(reply).toContain('POST /v1/data/daily');
    expect(extractNumbers(reply)).toEqual([]);

    // A question that needed only the labs: nothing to upload, only why they are not in the answer.
    const labsOnly = noDataReply({ ...NONE, daily: 90, labsWithheld: true }, ['labs']);
    expect(labsOnly).toMatch(
      /^I can't answer that from your own lab results[\s\S]*left out of this turn at your request/,
    );
    expect(labsOnly).not.toContain('upload');
    expect(extractNumbers(labsOnly)).toEqual([]);
  });

  test('lacksData: Data Science computes from any of the three tables; the Investigator needs daily summaries', () => {
    expect(lacksData({ ...NONE, profile: true }, ANALYSED_TABLES)).toBe(true);
    expect(lacksData({ ...NONE, labs: 2 }, ANALYSED_TABLES)).toBe(false);
    expect(lacksData({ ...NONE, workouts: 4, labs: 2, profile: true }, INVESTIGATED_TABLES)).toBe(true);
    expect(lacksData({ ...NONE, daily: 1 }, INVESTIGATED_TABLES)).toBe(false);
  });
});

describe('asksAboutOwnLabs', () => {
  test.each([
    'What was my most recent LDL and is it in range?',
    'What is my latest HbA1c?',
    'Is my vitamin D low?',
    'Can you read my blood work?',
  ])('%s: yes', (message) => expect(asksAboutOwnLabs(message)).toBe(true));

  test.each([
    'Is an LDL of 124 something to worry about?',
    'What is my average resting heart rate over the last 90 days?',
    'What is heart rate variability?',
  ])('%s: no', (message) => expect(asksAboutOwnLabs(message)).toBe(false));

  test('the note says how to upload labs and holds no number', () => {
    expect(NO_LABS_NOTE).toContain('POST /v1/data/labs');
    expect(extractNumbers(NO_LABS_NOTE)).toEqual([]);
  });

  test('ownLabsNote: none with labs; that they were left out when withheld; how to upload them otherwise', () => {
    expect(ownLabsNote({ ...NONE, labs: 4 })).toBeNull();
    expect(ownLabsNote(NONE)).toBe(NO_LABS_NOTE);
    const withheld = ownLabsNote({ ...NONE, labsWithheld: true })!;
    expect(withheld).toMatch(/left out of this turn at your request/);
    expect(withheld).not.toContain('POST /v1/data/labs');
    expect(extractNumbers(withheld)).toEqual([]);
  });
});
