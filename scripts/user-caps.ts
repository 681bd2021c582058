/**
 * A user's cost caps (docs/operations.md#cost-caps), in USD over the UTC calendar day and month:
 *
 *   npm run user:caps -- <user>                                  the caps and what was spent against them
 *   npm run user:caps -- <user> --daily-usd 5 --monthly-usd 50   sets them (either one alone sets only it)
 *   npm run user:caps -- <user> --daily-usd none                 no daily cap for this user, whatever the default
 *   npm run user:caps -- <user> --monthly-usd default            the default applies again to this window
 *   npm run user:caps -- <user> --clear                          the defaults apply again to both
 *
 * A change prints the caps as they now stand. Exit 0 when done, 1 with `error: …` otherwise.
 */
import type { Pool } from 'pg';
import { ConfigError, loadCostCapConfig } from '../platform/config';
import {
  changeUserCostCaps,
  COST_CAP_WINDOWS,
  costCapDefaults,
  costCapWindows,
  MAX_COST_CAP_USD,
  userCostCaps,
  userSpendUsd,
  type CostCapChange,
  type CostCapWindow,
} from '../platform/cost-caps';
import { createPgPool } from '../platform/pg-pool';
import { findUserByName } from '../platform/users';
import { CliError, failCommand, resolveDatabaseUrl } from './cli-env';

const USAGE = `usage: npm run user:caps -- <user> [--daily-usd <amount|none|default>] [--monthly-usd <amount|none|default>]
       npm run user:caps -- <user> --clear`;

const OPTION_WINDOW: Record<string, CostCapWindow> = { '--daily-usd': 'daily', '--monthly-usd': 'monthly' };
const DEFAULT_VARIABLE: Record<CostCapWindow, string> = {
  daily: 'AMY_USER_DAILY_CAP_USD',
  monthly: 'AMY_USER_MONTHLY_CAP_USD',
};

/** Dollars, up to the ledger's precision (six decimals): `5`, `0.25`, `12.000001`. */
const AMOUNT = /^\d+(\.\d{1,6})?$/;

function parseChange(option: string, raw: string | undefined): CostCapChange {
  if (raw === undefined || raw === '' || raw.startsWith('--')) {
    throw new CliError(`${option} needs a value: an amount in USD, none or default\n${USAGE}`);
  }
  if (raw === 'none' || raw === 'default') return raw;
  const amount = Number(raw);
  if (!AMOUNT.test(raw) || amount > MAX_COST_CAP_USD) {
    throw new CliError(
      `${option} ${JSON.stringify(raw)}: give an amount in USD from 0 to ${MAX_COST_CAP_USD} with at most 6 decimals ` +
        `(e.g. 5 or 0.25), none (no cap) or default`,
    );
  }
  return amount;
}

interface CapsCommand {
  user: string;
  changes: Partial<Record<CostCapWindow, CostCapChange>>;
}

function parseArgs(args: string[]): CapsCommand {
  const changes: CapsCommand['changes'] = {};
  const names: string[] = [];
  let clear = false;
  for (let i = 0; i < args.length; i++) {
    const [option, inline] = args[i].startsWith('--') ? args[i].split(/=(.*)/s, 2) : [args[i], undefined];
    if (!option.startsWith('--')) {
      names.push(option);
    } else if (option === '--clear' && inline === undefined) {
      clear = true;
    } else if (Object.hasOwn(OPTION_WINDOW, option)) {
      const window = OPTION_WINDOW[option];
      if (changes[window] !== undefined) throw new CliError(`${option} given twice\n${USAGE}`);
      changes[window] = parseChange(option, inline ?? args[++i]);
    } else {
      throw new CliError(`unknown option ${args[i]}\n${USAGE}`);
    }
  }
  if (names.length !== 1) throw new CliError(USAGE);
  if (clear) {
    if (Object.keys(changes).length)
      throw new CliError(`--clear sets both caps to the default: give it alone\n${USAGE}`);
    return { user: names[0], changes: { daily: 'default', monthly: 'default' } };
  }
  return { user: names[0], changes };
}

const usd = (amount: number) => `$${Number(amount.toFixed(6))}`;

async function describeCaps(pool: Pool, userId: string, userName: string): Promise<string> {
  const defaults = costCapDefaults(loadCostCapConfig());
  const now = new Date();
  const [caps, spent] = await Promise.all([userCostCaps(pool, userId, defaults), userSpendUsd(pool, userId, now)]);
  const windows = costCapWindows(now);
  const lines = COST_CAP_WINDOWS.map((window) => {
    const { limitUsd, source } = caps[window];
    const cap = limitUsd === null ? 'no cap' : `cap ${usd(limitUsd)}`;
    // The default shown is this shell's; the API and the worker apply the one in their own environment.
    const origin = source === 'user' ? 'set for this user' : `default: ${DEFAULT_VARIABLE[window]} here`;
    const period = window === 'daily' ? 'today' : 'this month';
    return `  ${window.padEnd(8)} ${`${cap} (${origin})`.padEnd(48)} spent ${usd(spent[window])} ${period}, resets ${windows[window].end.toISOString()}`;
  });
  return [`Cost caps of ${userName} (${userId}), in USD over UTC calendar days and months:`, ...lines].join('\n');
}

async function run() {
  const { user, changes } = parseArgs(process.argv.slice(2));
  const pool = createPgPool(resolveDatabaseUrl(), 2);
  try {
    const found = await findUserByName(pool, user);
    if (!found) throw new CliError(`no user named ${JSON.stringify(user)}`);
    if (Object.keys(changes).length) await changeUserCostCaps(pool, found.id, changes);
    console.log(await describeCaps(pool, found.id, found.name));
  } finally {
    await pool.end();
  }
}

run().catch((err) => failCommand(err, [ConfigError]));
