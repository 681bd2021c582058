/**
 * CPU time by role over a span of a run (`npm run load`, and `npm run bench`'s (g)): on a 2-core machine
 * the question "what limits throughput" is first "who spends the CPU", and the machine is shared, so the
 * time the rest of the machine used in the same span is read as well (/proc/stat).
 *
 * A role is a child of this process (Postgres, Temporal, the API, the workers, the model) with all its
 * descendants. Two ways to count it:
 * - cgroup (preferred): each role's processes are moved into a cpuacct cgroup of their own (v1, as root),
 *   whose counter includes every process that ever ran in it. This is the only way to see the sandbox:
 *   its processes run in a pid namespace of their own under bwrap, and their CPU never reaches the
 *   worker's cutime (three runs added 0 ticks there). Only cpuacct is touched: scheduling (the `cpu`
 *   controller) and memory limits stay as they were.
 * - /proc (fallback): utime + stime + cutime + cstime over the live processes of a subtree. Processes that
 *   were reaped by a live one are counted through its cutime; sandbox runs are not (they show up as the
 *   rest of the machine).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const CPUACCT = '/sys/fs/cgroup/cpuacct';

/** One cpuacct cgroup per role, under a parent named after this process. */
export class RoleCgroups {
  private readonly roles = new Map<string, string>();

  private constructor(private readonly root: string) {}

  /**
   * null when cgroup v1 cpuacct is not there or not writable (not root): fall back to /proc. `run`
   * names the parent (`amy-<run>-<pid>`), so a leftover one says which command left it.
   */
  static create(run = 'load'): RoleCgroups | null {
    const root = path.join(CPUACCT, `amy-${run}-${process.pid}`);
    try {
      fs.mkdirSync(root);
      return new RoleCgroups(root);
    } catch {
      return null;
    }
  }

  /** Moves every process below this one into its role's cgroup; processes they start later follow. */
  adoptChildren(): void {
    const stats = readAllStats();
    for (const stat of stats.values()) {
      if (stat.pid === process.pid) continue;
      const child = childOfSelf(stats, stat.pid);
      if (child === null) continue;
      const role = classify(readCmdline(child));
      let dir = this.roles.get(role);
      if (!dir) {
        dir = path.join(this.root, role.replace(/\W+/g, '-'));
        fs.mkdirSync(dir, { recursive: true });
        this.roles.set(role, dir);
      }
      try {
        fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(stat.pid));
      } catch {
        // ended since it was listed
      }
    }
  }

  usageSeconds(): Map<string, number> {
    const usage = new Map<string, number>();
    for (const [role, dir] of this.roles) {
      usage.set(role, Number(fs.readFileSync(path.join(dir, 'cpuacct.usage'), 'utf8')) / 1e9);
    }
    return usage;
  }

  /** Hands any process still inside back to the top cgroup and removes the groups. */
  remove(): void {
    for (const dir of [...this.roles.values(), this.root]) {
      try {
        for (const pid of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
          fs.writeFileSync(path.join(CPUACCT, 'cgroup.procs'), pid);
        }
        fs.rmdirSync(dir);
      } catch (err) {
        console.error(`could not remove cgroup ${dir}:`, err instanceof Error ? err.message : err);
      }
    }
  }
}

export interface CpuSample {
  /** CPU seconds by role since the processes started. */
  byRole: Map<string, number>;
  /** The whole machine, from /proc/stat: busy and total CPU seconds (all cores) since boot. */
  machineBusy: number;
  machineTotal: number;
  wallMs: number;
}

export interface CpuUsage {
  wallSeconds: number;
  /** Cores used on average over the span, by role. */
  coresByRole: Array<{ role: string; cores: number; seconds: number }>;
  /** Cores busy on the whole machine, and how much of that was outside this run's processes. */
  machineCores: number;
  otherCores: number;
  cores: number;
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in ticks. */
  ticks: number;
  ownTicks: number;
}

function readProcStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // ended since the directory listing
  }
  // The command name is in parentheses and may itself contain spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]));
  return { pid, ppid: Number(fields[1]), ticks: utime + stime + cutime + cstime, ownTicks: utime + stime };
}

function readCmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** The role each process is counted under, as reports name it. */
export const CPU_ROLES = {
  postgres: 'Postgres',
  temporal: 'Temporal',
  api: 'API',
  workers: 'workers',
  model: 'scripted model',
  bareWorker: 'bare worker',
  /** A child of this process that is none of the above. */
  other: 'other',
} as const;

function classify(cmdline: string): string {
  if (/\bpostgres\b/.test(cmdline)) return CPU_ROLES.postgres;
  if (cmdline.includes('start-dev')) return CPU_ROLES.temporal;
  if (cmdline.includes('api/main.ts')) return CPU_ROLES.api;
  if (cmdline.includes('worker/main.ts')) return CPU_ROLES.workers;
  if (cmdline.includes('model-process.ts')) return CPU_ROLES.model;
  if (cmdline.includes('bare-worker-process.ts')) return CPU_ROLES.bareWorker;
  return CPU_ROLES.other;
}

function readAllStats(): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat) stats.set(stat.pid, stat);
  }
  return stats;
}

/** The child of this process that `pid` descends from, or null. */
function childOfSelf(stats: Map<number, ProcStat>, pid: number): number | null {
  let p = stats.get(pid);
  while (p && p.ppid !== process.pid) p = p.ppid > 1 ? stats.get(p.ppid) : undefined;
  return p ? p.pid : null;
}

/**
 * CPU seconds by role so far: from the roles' cgroups when given (anything not in one is then left out,
 * but for this process itself, counted as `selfRole`), from /proc otherwise.
 */
export function sampleCpu(cgroups: RoleCgroups | null, selfRole = 'load generator'): CpuSample {
  const ticks = clockTicks();
  const stats = readAllStats();
  const byRole = cgroups ? cgroups.usageSeconds() : new Map<string, number>();
  const add = (role: string, t: number) => byRole.set(role, (byRole.get(role) ?? 0) + t / ticks);
  add(selfRole, stats.get(process.pid)?.ownTicks ?? 0);
  if (!cgroups) {
    const roleOfChild = new Map<number, string>();
    for (const stat of stats.values()) {
      if (stat.pid === process.pid) continue;
      const child = childOfSelf(stats, stat.pid);
      if (child === null) continue;
      if (!roleOfChild.has(child)) roleOfChild.set(child, classify(readCmdline(child)));
      add(roleOfChild.get(child)!, stat.ticks);
    }
  }
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = cpu[3] + cpu[4];
  return { byRole, machineBusy: (total - idle) / ticks, machineTotal: total / ticks, wallMs: Date.now() };
}

export function cpuBetween(start: CpuSample, end: CpuSample, cores: number): CpuUsage {
  const wallSeconds = (end.wallMs - start.wallMs) / 1000;
  const coresByRole = [...end.byRole]
    .map(([role, seconds]) => {
      const used = seconds - (start.byRole.get(role) ?? 0);
      return { role, seconds: used, cores: used / wallSeconds };
    })
    .filter((r) => r.seconds > 0)
    .sort((a, b) => b.seconds - a.seconds);
  const ours = coresByRole.reduce((sum, r) => sum + r.cores, 0);
  // /proc/stat counts CPU seconds over all cores; divided by wall time it is cores busy on average.
  const machineCores = (end.machineBusy - start.machineBusy) / wallSeconds;
  return { wallSeconds, coresByRole, machineCores, otherCores: Math.max(0, machineCores - ours), cores };
}
