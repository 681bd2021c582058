/**
 * `npm run demo:user -- <name>`: a new user with an API key and the demo's synthetic history (daily
 * summaries, workouts, lab panels up to today), for trying the service with someone other than `demo`.
 */
import { createUserCommand, failUserCommand } from '../../scripts/user-create';
import { seedDemoHealthData } from './demo-user';

createUserCommand(process.argv.slice(2), 'usage: npm run demo:user -- <name>', async (pool, userId) => {
  const counts = await seedDemoHealthData(pool, userId);
  return `${counts.days} days of synthetic health data up to today, ${counts.workouts} workouts, ${counts.biomarkers} lab results`;
}).catch(failUserCommand);
