import { z } from 'zod';
import { MODEL_CALL_IDS, type ModelCallId } from '../../contracts/steps';

/**
 * Faults that tests queue up to exercise the caller's error handling. Each matching request
 * consumes one; a fault with `times: -1` stays until cleared.
 */
/** `web_tools_unavailable`: the request's server tools (web search, fetch) answer `unavailable`, the call itself succeeds. */
const FAULT_KINDS = [
  'overloaded',
  'server_error',
  'slow',
  'malformed',
  'hang',
  'stream_cut',
  'web_tools_unavailable',
] as const;
type FaultKind = (typeof FAULT_KINDS)[number];

export const faultSpecSchema = z
  .object({
    kind: z.enum(FAULT_KINDS),
    /** Only requests for this model call (contracts/steps.ts); any call when absent. */
    step: z.enum(MODEL_CALL_IDS as [ModelCallId, ...ModelCallId[]]).optional(),
    times: z
      .number()
      .int()
      .refine((n) => n === -1 || n >= 1, 'must be -1 (until cleared) or a positive integer')
      .default(1),
    /** How long a `slow` fault holds the answer back. */
    delay_ms: z.number().int().min(0).max(600_000).default(1000),
  })
  .strict();
export type FaultSpec = z.input<typeof faultSpecSchema>;

export interface PendingFault {
  kind: FaultKind;
  step: ModelCallId | null;
  /** Requests it still applies to; -1 = until cleared. */
  remaining: number;
  delay_ms: number;
}

export class FaultController {
  #pending: PendingFault[] = [];

  /** Validates and queues a fault; throws a ZodError on a bad spec. */
  inject(spec: FaultSpec): PendingFault {
    const { kind, step, times, delay_ms } = faultSpecSchema.parse(spec);
    const fault: PendingFault = { kind, step: step ?? null, remaining: times, delay_ms };
    this.#pending.push(fault);
    return { ...fault };
  }

  clear(): void {
    this.#pending = [];
  }

  pending(): PendingFault[] {
    return this.#pending.map((fault) => ({ ...fault }));
  }

  /**
   * Consumes the oldest fault that applies to this request. `stream_cut` only applies to streams,
   * so a non-streaming request leaves it queued for the stream it was meant for.
   */
  take(step: ModelCallId, streaming: boolean): PendingFault | null {
    const index = this.#pending.findIndex(
      (fault) => (fault.step === null || fault.step === step) && (streaming || fault.kind !== 'stream_cut'),
    );
    if (index === -1) return null;
    const fault = this.#pending[index];
    if (fault.remaining > 0 && --fault.remaining === 0) this.#pending.splice(index, 1);
    return { ...fault };
  }
}
