/** The `amy` executable: runs the command line against this process, then exits with its code. */
import { runAmy } from './cli';
import { processContext } from './context';

/** Exits once stdout and stderr have taken everything: idle keep-alive sockets must not hold the process open. */
function exitAfterFlush(code: number): void {
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', flushed);
  process.stderr.write('', flushed);
}

// A reader that went away (`amy ask --json | head -1`) ends the command quietly; the turn runs on.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

void runAmy(process.argv.slice(2), processContext()).then(exitAfterFlush);
