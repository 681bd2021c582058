import type Anthropic from '@anthropic-ai/sdk';

export interface LoggedRequest {
  step: string | null;
  /** The call's inputs as sent (`amy_step_inputs`), null when the request had none. */
  inputs: unknown;
  model: string;
  system: string;
  messages: Anthropic.MessageParam[];
  stream: boolean;
  /** The tools offered, by name: the caller's and the API's own (`web_search`, `web_fetch`). */
  tools: string[];
  /** The request's `anthropic-beta` flags. */
  betas: string[];
  /** The fault this request consumed, if any. */
  fault: string | null;
  at: string;
}

const MAX_ENTRIES = 1000;

/** What the model was asked, newest last, so tests can assert on prompts. Bounded for long demos. */
export class RequestLog {
  #entries: LoggedRequest[] = [];

  add(entry: LoggedRequest): void {
    this.#entries.push(entry);
    if (this.#entries.length > MAX_ENTRIES) this.#entries.splice(0, this.#entries.length - MAX_ENTRIES);
  }

  entries(): LoggedRequest[] {
    return [...this.#entries];
  }

  clear(): void {
    this.#entries = [];
  }
}
