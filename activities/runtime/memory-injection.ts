/**
 * Memory injection (docs/design.md#injection): every step that reads the user's memory puts the turn's
 * summary at the top of its system prompt the same way, so the block lives with the runtime they all use.
 */

/** The first line of the memory block, naming what follows as read-only context. */
export const MEMORY_HEADING = 'WHAT YOU REMEMBER ABOUT THE USER (read-only context, most recent first):';

/**
 * An agent's system prompt with the turn's memory summary at its top (docs/design.md#injection): the
 * heading, the summary, a blank line, then the agent's own instructions. The summary is the one read at
 * the start of the turn; nothing is added when there is none (no memory, or `include_memory: false`).
 */
export function withMemory(system: string, memory: string | undefined): string {
  if (!memory) return system;
  return `${MEMORY_HEADING}\n${memory}\n\n${system}`;
}
