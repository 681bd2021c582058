/**
 * The bench's reader of a turn's activity shape (dev/bench/history-shape.ts), which the bare floor of
 * (a), (f) and (g) runs as no-ops: on recorded turn histories (one after another, and with two
 * activities overlapping), and on a history with local-activity markers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import {
  activityShape,
  asActivities,
  isSequential,
  LOCAL_ACTIVITY_MARKER,
  shapeKey,
  type BareStep,
} from '../../dev/bench/history-shape';

const recorded = (file: string) =>
  historyFromJSON(JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'histories', file), 'utf8'))).events ?? [];

/** `after` of a step that waits for every step before it. */
const allBefore = (i: number) => Array.from({ length: i }, (_, j) => j);

test('a knowledge turn recorded one activity after another reads as as many sequential steps', () => {
  const shape = activityShape(recorded('pattern-1-expert.json'));
  expect(shape.activities).toBe(9);
  expect(shape.localActivities).toBe(0);
  expect(shape.maxConcurrentActivities).toBe(1);
  expect(shape.steps.map((s) => s.kind)).toEqual(Array(9).fill('activity'));
  expect(shape.steps.map((s) => s.after)).toEqual(shape.steps.map((_, i) => allBefore(i)));
  expect(shape.steps[0].type).toBe('startTurn');
  expect(shape.steps[8].type).toBe('completeTurn');
  expect(isSequential(shape.steps)).toBe(true);
});

test('two activities the turn ran at once neither wait for the other; the next waits for both', () => {
  const shape = activityShape(recorded('pattern-6-coach-data-expert.json'));
  const types = shape.steps.map((s) => s.type);
  const plan = types.indexOf('planAnalysis');
  const expert = types.indexOf('consultDomainExpert');
  const code = types.indexOf('writeAnalysisCode');
  expect(expert).toBe(plan + 1);
  expect(shape.maxConcurrentActivities).toBe(2);
  expect(shape.steps[plan].after).toEqual(allBefore(plan));
  // Scheduled while planAnalysis was still open: it does not wait for it.
  expect(shape.steps[expert].after).toEqual(allBefore(plan));
  expect(shape.steps[code].after).toEqual(allBefore(code));
  expect(isSequential(shape.steps)).toBe(false);
});

/** A history in the JSON form `temporal workflow show --output json` and test/histories use. */
const fromJson = (events: object[]) => historyFromJSON({ events }).events ?? [];
const base64 = (text: string) => Buffer.from(text).toString('base64');

const marker = (id: number, markerName: string, data?: object) => ({
  eventId: String(id),
  eventType: 'EVENT_TYPE_MARKER_RECORDED',
  markerRecordedEventAttributes: {
    markerName,
    details: data
      ? { data: { payloads: [{ metadata: { encoding: base64('json/plain') }, data: base64(JSON.stringify(data)) }] } }
      : {},
  },
});
const localActivity = (id: number, activityType: string) =>
  marker(id, LOCAL_ACTIVITY_MARKER, { seq: 1, attempt: 1, activity_id: String(id), activity_type: activityType });
const activity = (id: number, name: string) => [
  {
    eventId: String(id),
    eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
    activityTaskScheduledEventAttributes: { activityType: { name } },
  },
  {
    eventId: String(id + 1),
    eventType: 'EVENT_TYPE_ACTIVITY_TASK_STARTED',
    activityTaskStartedEventAttributes: { scheduledEventId: String(id) },
  },
  {
    eventId: String(id + 2),
    eventType: 'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
    activityTaskCompletedEventAttributes: { scheduledEventId: String(id), startedEventId: String(id + 1) },
  },
];

test('local-activity markers count as local steps in their place; other markers do not count', () => {
  const events = fromJson([
    localActivity(5, 'startTurn'),
    ...activity(9, 'route'),
    marker(15, 'core_patch', { id: 'memory-read-at-turn-start' }),
    localActivity(16, 'recallMemory'),
    marker(17, LOCAL_ACTIVITY_MARKER),
    activity(18, 'synthesise')[0],
  ]);
  const shape = activityShape(events);
  const expected: BareStep[] = [
    { kind: 'local', type: 'startTurn', after: [] },
    { kind: 'activity', type: 'route', after: [0] },
    { kind: 'local', type: 'recallMemory', after: [0, 1] },
    { kind: 'local', type: 'local activity', after: [0, 1, 2] },
    { kind: 'activity', type: 'synthesise', after: [0, 1, 2, 3] },
  ];
  expect(shape.steps).toEqual(expected);
  expect(shape.activities).toBe(2);
  expect(shape.localActivities).toBe(3);
  expect(shapeKey(shape.steps)).toBe(
    'local startTurn → route → local recallMemory → local local activity → synthesise',
  );
  expect(isSequential(shape.steps)).toBe(true);
});

test("the floor runs every step as a full activity, in the turn's order and with its waits", () => {
  const turn: BareStep[] = [
    { kind: 'local', type: 'startTurn', after: [] },
    { kind: 'activity', type: 'route', after: [0] },
    { kind: 'activity', type: 'planAnalysis', after: [0, 1] },
    { kind: 'activity', type: 'consultDomainExpert', after: [0, 1] },
    { kind: 'local', type: 'completeTurn', after: [0, 1, 2, 3] },
  ];
  const floor = asActivities(turn);
  expect(floor.map((s) => s.kind)).toEqual(Array(5).fill('activity'));
  expect(floor.map(({ type, after }) => ({ type, after }))).toEqual(turn.map(({ type, after }) => ({ type, after })));
  expect(turn[0].kind).toBe('local'); // the turn's own shape is left as it was, for the second floor
});
