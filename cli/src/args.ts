/**
 * Command lines through `node:util`'s `parseArgs` in strict mode: an unknown flag, a missing value or
 * a wrong number of arguments is a `UsageError` (exit 2) that points at the command's `--help`.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommandLine<O extends Options>(
  command: string,
  args: string[],
  options: O,
  positionals: { names: string[]; min?: number; variadic?: boolean },
) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${plainParseError(err)}. Run \`amy ${command} --help\` for usage.`);
  }
  const min = positionals.min ?? positionals.names.length;
  const count = parsed.positionals.length;
  if (count < min) {
    const missing = positionals.names.slice(count).map((name) => `<${name}>`);
    throw new UsageError(`Missing ${missing.join(' ')}. Run \`amy ${command} --help\` for usage.`);
  }
  if (!positionals.variadic && count > positionals.names.length) {
    const extra = parsed.positionals.slice(positionals.names.length).join(' ');
    throw new UsageError(`Unexpected argument: ${extra}. Run \`amy ${command} --help\` for usage.`);
  }
  return parsed;
}

/** `--after 12`: an event id, 0 or more. */
export function parseEventId(value: string | undefined, flag: string, command: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) {
    throw new UsageError(
      `${flag} takes an event id (0 or more), not ${JSON.stringify(value)}. Run \`amy ${command} --help\` for usage.`,
    );
  }
  return Number(value);
}

/** Node's messages suggest `--` workarounds that do not apply here; say only what was wrong. */
function plainParseError(err: unknown): string {
  const { code, message } = err as { code?: string; message: string };
  const option = /'([^']+)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) return `Unknown option ${option}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option && message.includes('argument missing')) {
    return `Option ${option.replace(/ <value>$/, '')} needs a value`;
  }
  return message.replace(/\.$/, '');
}
