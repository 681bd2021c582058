/**
 * What the sandbox offers its callers (./index.ts makes one, ./tracing.ts puts a span around its calls):
 * a syntax check of generated code, and a confined run of it over a user's data.
 */
import type { BiomarkerRow, DailyRow, HealthProfileRow, WorkoutRow } from '../../contracts/health-records';
import type { SlotsLoad } from './slots';

/**
 * How runs start (`AMY_SANDBOX_WARM`): `fork`, children of a fork server that imported pandas once
 * (./fork-server.ts; root only); `pool`, pre-started one-shot interpreters that imported pandas while
 * waiting for their one run (./pool.ts); `off`, a fresh interpreter per run. `fork` is asked of a
 * non-root worker in vain: it needs distinct host uids for its children, so such a worker uses `pool`.
 */
export const WARM_MODES = ['fork', 'pool', 'off'] as const;
export type WarmMode = (typeof WARM_MODES)[number];

export interface SandboxData {
  summary: DailyRow[];
  activities: WorkoutRow[];
  /** The lab results (`labs_df`); absent: none. */
  labs?: BiomarkerRow[];
  /** null when the user has no profile: `profile_df` is then empty. */
  profile: HealthProfileRow | null;
}

export type SandboxErrorKind =
  'exception' | 'timeout' | 'cpu_limit' | 'memory_limit' | 'forbidden' | 'crashed' | 'output_too_large';

export type SandboxResult =
  | { status: 'ok'; result: unknown; stdout: string; durationMs: number }
  | {
      status: 'error';
      kind: SandboxErrorKind;
      message: string;
      /** The generated code's own frames only, with its line numbers. */
      traceback?: string;
      /** The line of the generated code the error points at, when there is one. */
      line?: number;
      durationMs: number;
    };

type PreflightResult =
  { ok: true; code: string; autoFixed: boolean } | { ok: false; error: { line: number; col: number; message: string } };

export interface Sandbox {
  /** Syntax check, repairing the commonest indentation slip; run `code` from the answer. */
  preflight(code: string, options?: { signal?: AbortSignal }): Promise<PreflightResult>;
  run(input: { code: string; data: SandboxData; signal?: AbortSignal }): Promise<SandboxResult>;
  /** Runs in progress and waiting, against the bound, and the most at once so far (for logs and tests). */
  readonly load: SlotsLoad;
  /** How its runs start: the mode asked for, as this worker can have it (see WarmMode). */
  readonly warm: WarmMode;
  /**
   * Stops what it keeps warm (the fork server, the pool's waiting interpreters), for a worker that stops or
   * a caller done with it. A run after it starts them again.
   */
  close(): Promise<void>;
}
