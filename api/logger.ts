/** Structured one-line JSON logs on stdout/stderr. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

export function createLogger(service: string, minLevel: Level = 'info'): Logger {
  const min = LEVELS.indexOf(minLevel);
  const write =
    (level: Level) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (LEVELS.indexOf(level) < min) return;
      const line = JSON.stringify({ at: new Date().toISOString(), level, service, msg, ...fields });
      (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(line + '\n');
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
