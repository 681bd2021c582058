/** Reads an environment variable where there is one (Node, Bun, Deno's Node compatibility); undefined in a browser. */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name]?.trim();
  return value ? value : undefined;
}
