/**
 * The activity shape of a recorded workflow history: which steps a turn ran, in which order, and which
 * of them overlapped, so that the bare floor (dev/bench/bare-workflow.ts) can run the same shape with
 * no-ops. Pure: it reads events, fetched by the caller.
 *
 * - An activity is an `ActivityTaskScheduled` event. It overlaps whatever activities were scheduled
 *   and not yet closed at that point.
 * - A local activity leaves no event of its own until it is done: a `MarkerRecorded` event with the
 *   SDK's local-activity marker name, written with the workflow task that saw it complete. Its start
 *   is not in the history, so it is placed at its marker: the steps after the marker wait for it.
 *
 * Each step waits for exactly the steps that had closed before it was scheduled (its marker, for a
 * local activity) and for nothing that was still running: a bare workflow that starts each step once
 * those are done has the turn's order and the turn's overlaps, and is one after another when the
 * turn's steps were.
 */
import type { temporal } from '@temporalio/proto';
import { LOCAL_ACTIVITY_MARKER, localActivityType } from '../../platform/temporal/local-activity-markers';

export { LOCAL_ACTIVITY_MARKER };

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface BareStep {
  kind: 'activity' | 'local';
  /** The activity type the turn ran, kept so the bare workflow's history reads like the turn's. */
  type: string;
  /** Indexes of the earlier steps this one starts after (those closed when the turn scheduled it). */
  after: number[];
}

export interface ActivityShape {
  steps: BareStep[];
  activities: number;
  localActivities: number;
  /** The most activities scheduled and not yet closed at one time: 1 means one after another. */
  maxConcurrentActivities: number;
}

/** `sandbox → local recallMemory → …`: equal for two histories exactly when their step sequences are. */
export function shapeKey(steps: readonly BareStep[]): string {
  return steps.map((s) => (s.kind === 'local' ? `local ${s.type}` : s.type)).join(' → ');
}

/**
 * The floor's steps: every step of the turn as a full activity, local ones included. That is "a bare
 * workflow with the same number of no-op activities" (the floor of (a), (f) and (g)); running a step as a
 * local activity is one of the ways a turn comes closer to it. The turn's own shape, local activities
 * kept local, is the informational second floor beside it.
 */
export function asActivities(steps: readonly BareStep[]): BareStep[] {
  return steps.map((step) => ({ ...step, kind: 'activity' }));
}

/** Whether no step of `steps` overlaps another: each starts after every step before it. */
export function isSequential(steps: readonly BareStep[]): boolean {
  return steps.every((step, i) => step.after.length === i);
}

/** How a bare workflow runs `shape`, in words for a report. */
export function overlapInWords(shape: ActivityShape): string {
  return isSequential(shape.steps)
    ? 'one after another, as the turn ran them'
    : `with the turn's overlaps (up to ${shape.maxConcurrentActivities} activities at once)`;
}

export function activityShape(events: readonly HistoryEvent[]): ActivityShape {
  const steps: BareStep[] = [];
  /** Step index by the scheduled event's id, for the events that close an activity. */
  const stepOfEvent = new Map<string, number>();
  const open = new Set<number>();
  const closed: number[] = [];
  let maxConcurrentActivities = 0;
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const index = steps.length;
      steps.push({
        kind: 'activity',
        type: scheduled.activityType?.name ?? 'unknown',
        after: [...closed].sort((a, b) => a - b),
      });
      stepOfEvent.set(String(event.eventId), index);
      open.add(index);
      maxConcurrentActivities = Math.max(maxConcurrentActivities, open.size);
      continue;
    }
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === LOCAL_ACTIVITY_MARKER) {
      const index = steps.length;
      steps.push({
        kind: 'local',
        type: localActivityType(event) ?? 'local activity',
        after: [...closed].sort((a, b) => a - b),
      });
      closed.push(index);
      continue;
    }
    const close =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (close) {
      const index = stepOfEvent.get(String(close.scheduledEventId));
      if (index !== undefined && open.delete(index)) closed.push(index);
    }
  }
  return {
    steps,
    activities: steps.filter((s) => s.kind === 'activity').length,
    localActivities: steps.filter((s) => s.kind === 'local').length,
    maxConcurrentActivities,
  };
}
