/**
 * Terra's numeric ActivityType (the spec's `ActivityType` enum, 146 members) to our workout types. Only
 * members that plainly are one of our seven types are listed; an activity of any other type (tennis, rowing,
 * skiing, an e-bike ride, "Other") is left out rather than stored under a type it is not, since a workout's
 * type is what the analysis groups by.
 */
import type { WorkoutType } from '../../../contracts/health-records';

export const TERRA_ACTIVITY_TYPES: ReadonlyMap<number, WorkoutType> = new Map<number, WorkoutType>([
  [8, 'running'], // Running
  [56, 'running'], // Jogging
  [57, 'running'], // Running on Sand
  [58, 'running'], // Treadmill Running
  [88, 'running'], // Treadmill (a treadmill session that is not Treadmill Walking, 95)
  [133, 'running'], // Indoor Running
  [149, 'running'], // Trail Running
  [1, 'cycling'], // Biking
  [15, 'cycling'], // Mountain Biking
  [16, 'cycling'], // Road Biking
  [17, 'cycling'], // Spinning
  [18, 'cycling'], // Stationary Biking
  [19, 'cycling'], // Utility Biking
  [150, 'cycling'], // Gravel Cycling
  [80, 'strength'], // Strength Training
  [97, 'strength'], // Weightlifting
  [41, 'strength'], // Kettlebell Training
  [100, 'yoga'], // Yoga
  [7, 'walking'], // Walking
  [35, 'walking'], // Hiking
  [93, 'walking'], // Walking for Fitness
  [94, 'walking'], // Nordic Walking
  [95, 'walking'], // Treadmill Walking
  [116, 'walking'], // Walking with Stroller
  [82, 'swimming'], // Swimming
  [83, 'swimming'], // Swimming in Pool
  [84, 'swimming'], // Open Water Swimming
  [114, 'HIIT'], // HIIT
  [115, 'HIIT'], // Interval Training
  [22, 'HIIT'], // Circuit Training
]);
