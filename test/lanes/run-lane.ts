/**
 * One lane of `npm test`: commands run one after another, stopping at the first that fails (as `&&` does),
 * each timed. Their output (stdout and stderr in the order written) goes to the lane's own log file, so that
 * two lanes running side by side are read one after the other, whole, rather than interleaved line by line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

interface Step {
  name: string;
  command: string;
  args: string[];
  /** The repository root unless set (the toolchain tier runs in a copy of the working tree). */
  cwd?: string;
  /** Added to the step's processes' niceness: how much it yields when the other lane wants the CPU too. */
  niceness?: number;
}

export interface Lane {
  name: string;
  steps: Step[];
}

export interface StepOutcome {
  lane: string;
  step: string;
  /** The exit code, or null when an earlier step of the lane failed and this one did not run. */
  code: number | null;
  seconds: number;
}

/** Every child a lane is running right now, so that a signal to `npm test` reaches them. */
export const runningChildren = new Set<ChildProcess>();

function runStep(step: Step, cwd: string, log: number): Promise<number> {
  fs.writeSync(log, `\n$ ${[step.command, ...step.args].join(' ')}${step.cwd ? `   (in ${step.cwd})` : ''}\n`);
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, { cwd: step.cwd ?? cwd, stdio: ['ignore', log, log] });
    runningChildren.add(child);
    // Set before the command starts anything of its own, so its whole process tree inherits it.
    if (child.pid !== undefined && step.niceness) os.setPriority(child.pid, os.getPriority(child.pid) + step.niceness);
    child.on('error', (err) => {
      fs.writeSync(log, `${step.command} could not run: ${err.message}\n`);
    });
    child.on('close', (code, signal) => {
      runningChildren.delete(child);
      resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1));
    });
  });
}

/**
 * Runs `lane` from `cwd`, writing its output to `logFile` and a line per step to our stdout as it goes; once
 * the lane is done, prints its whole log.
 */
export async function runLane(lane: Lane, cwd: string, logFile: string): Promise<StepOutcome[]> {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = fs.openSync(logFile, 'w');
  const outcomes: StepOutcome[] = [];
  try {
    let failed = false;
    for (const step of lane.steps) {
      if (failed) {
        outcomes.push({ lane: lane.name, step: step.name, code: null, seconds: 0 });
        continue;
      }
      console.log(`[${lane.name}] ${step.name}: started`);
      const started = Date.now();
      const code = await runStep(step, cwd, log);
      const seconds = Math.round((Date.now() - started) / 1000);
      outcomes.push({ lane: lane.name, step: step.name, code, seconds });
      console.log(`[${lane.name}] ${step.name}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`} in ${seconds} s`);
      failed = code !== 0;
    }
  } finally {
    fs.closeSync(log);
  }
  console.log(`\n======== ${lane.name}: its whole output (${logFile}) ========`);
  process.stdout.write(fs.readFileSync(logFile));
  console.log(`======== end of ${lane.name} ========\n`);
  return outcomes;
}
