/**
 * A local activity leaves no ActivityTaskScheduled event in its workflow's history: Temporal's core
 * records one MarkerRecorded event (`core_local_activity`) when it completes, whose `data` detail is core's
 * own JSON (`{ seq, attempt, activity_id, activity_type, … }`, not passed through the service's payload
 * codec) and whose `userMetadata.summary` is the step's summary, like a full activity's. For code that
 * reads histories (the benchmarks, the tests) and must see the bookkeeping steps the workflow runs locally
 * (workflows/activity-proxies.ts).
 */
import type { temporal } from '@temporalio/proto';

/** What Temporal's SDK core names the marker of a completed local activity (LOCAL_ACTIVITY_MARKER_NAME). */
export const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** The activity type of a local activity's marker; null for any other event. */
export function localActivityType(event: temporal.api.history.v1.IHistoryEvent): string | null {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== LOCAL_ACTIVITY_MARKER) return null;
  const data = marker.details?.data?.payloads?.[0]?.data;
  if (!data) return null;
  try {
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: unknown };
    return typeof parsed.activity_type === 'string' ? parsed.activity_type : null;
  } catch {
    return null;
  }
}
