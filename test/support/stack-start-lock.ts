/**
 * One `npm start` starting at a time on this host, across the services tier's jest workers.
 *
 * `npm start` (dev/stack/main.ts) picks its ports by preference: 3000 for the API, 8234 for the codec
 * server, 7233 and 8233 for Temporal, 54329 for Postgres, 4100 for the scripted model (dev/stack/ports.ts,
 * `preferPort`). It checks that each is free well before the process that needs it binds it, so two stacks
 * starting at once can both pick the same port, and one of them then fails. A suite that starts one from a
 * fresh machine's environment holds this lock until the stack is up; a stack started after that finds those
 * ports taken and picks others. The lock is an flock, which the kernel drops if its holder dies.
 */
import os from 'node:os';
import path from 'node:path';
import { tryLock } from '../../platform/sandbox/run-dir';

const LOCK_FILE = path.join(os.tmpdir(), 'amy-test-stack-start.lock');
const POLL_MS = 200;

/** Runs `start` (a stack's start-up, until its ports are bound) while no other suite on the host starts one. */
export async function startingAStack<T>(start: () => Promise<T>, timeoutMs = 600_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lock = await tryLock(LOCK_FILE);
    if (lock) {
      try {
        return await start();
      } finally {
        await lock.release();
      }
    }
    if (Date.now() > deadline) throw new Error(`another suite held ${LOCK_FILE} for ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
