/**
 * `npm run eval`: a truthfulness scorecard of the real service. It starts throwaway Postgres and
 * Temporal servers (or uses DATABASE_URL / TEMPORAL_ADDRESS) as `npm run bench` does, the scripted
 * model, a worker and the API in this process, asks the question set and the adversarial cases over
 * HTTP for synthetic users with planted truths, scores every answer against the users' rows, prints
 * the scorecard and appends it to docs/eval.md.
 *
 * Not a test: a missed target is reported, not turned into an exit code. It exits non-zero only when
 * the eval could not run (the services did not start, the API could not be reached).
 */
import { useEphemeralMasterKey } from '../stack/dev-keys';
import { execSync } from 'node:child_process';
import { Pool } from 'pg';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { quietBundlerLogger, workflowsPath } from '../../worker/create-worker';
import { startInfrastructure } from '../bench/infrastructure';
import { machineInfo } from '../bench/report';
import { scriptedRules } from '../scripted-model/rules';
import { runSessions, type Session, type TurnRecord } from './cases';
import {
  FALSE_MEMORY,
  IMPORTED_QUESTIONS,
  QUESTION_SETS,
  STATE_A_NUMBER,
  WRONG_NUMBER_QUESTIONS,
  type EvalQuestion,
} from './questions';
import { appendToEvalDoc, formatMarkdown, renderRun, renderSummary, writeRunTurns } from './report';
import { buildScorecard } from './scorecard';
import { startEvalStack, type EvalStack } from './stack';
import { createImportedUser, createSyntheticUser } from './users';

/** Seeds of the three question-set users; the demo user is seed 7. */
const SEEDS = [11, 23, 42] as const;

const say = (msg: string) => console.log(`[eval] ${msg}`);

/** The commit the run measured, and whether the working tree differed from it. */
function buildLabel(): string {
  try {
    const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    const dirty = execSync('git status --porcelain --untracked-files=no', { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${commit} with uncommitted changes in the working tree` : commit;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

async function run(): Promise<number> {
  useEphemeralMasterKey();
  const startedAt = performance.now();
  const stoppers: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stoppers.splice(0).reverse()) {
      await stop().catch((err) => console.error('[eval] stop failed:', err));
    }
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => void stopAll().then(() => process.exit(130)));
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });

  try {
    say('starting Postgres and Temporal');
    const infra = await startInfrastructure();
    stoppers.push(() => infra.stop());
    say('bundling the turn workflow');
    const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger });
    const pool = new Pool({ connectionString: infra.databaseUrl, max: 6 });
    stoppers.push(() => pool.end());
    const stack = (name: string, rules: ReturnType<typeof scriptedRules>): Promise<EvalStack> =>
      startEvalStack({
        databaseUrl: infra.databaseUrl,
        temporalAddress: infra.temporalAddress,
        workflowBundleCode: code,
        rules,
        name,
      });

    say('creating users');
    const users = await Promise.all(SEEDS.map((seed) => createSyntheticUser(pool, `set${seed}`, seed)));
    const stateUser = await createSyntheticUser(pool, 'state_number', SEEDS[0]);
    const memoryUser = await createSyntheticUser(pool, 'false_memory', SEEDS[1]);
    const { user: importedUser, damage } = await createImportedUser(pool, SEEDS[2]);
    const wrongUser = await createSyntheticUser(pool, 'wrong_number', SEEDS[0]);

    const honest = await stack('honest', scriptedRules());
    stoppers.push(() => honest.close());
    say(`question set: ${QUESTION_SETS.reduce((a, s) => a + s.length, 0)} turns for ${users.length} users`);
    const records: TurnRecord[] = await runSessions(
      honest.apiUrl,
      pool,
      users.map((user, i): Session => ({ case: 'main', user, questions: QUESTION_SETS[i] })),
    );

    say('adversarial cases (1)–(3)');
    const stateQuestion: EvalQuestion = { text: STATE_A_NUMBER.question, pattern: 'my data' };
    records.push(
      ...(await runSessions(honest.apiUrl, pool, [
        { case: 'state a number', user: stateUser, questions: [stateQuestion], scoreRouting: false },
        { case: 'false memory', user: memoryUser, questions: FALSE_MEMORY.questions, memory: FALSE_MEMORY.memory },
        { case: 'imported data', user: importedUser, questions: IMPORTED_QUESTIONS },
      ])),
    );
    await honest.close();

    say('adversarial case (4): a scripted model whose code returns a wrong number');
    const wrong = await stack('wrong', scriptedRules({ wrongResult: 'number' }));
    stoppers.push(() => wrong.close());
    records.push(
      ...(await runSessions(wrong.apiUrl, pool, [
        { case: 'wrong number', user: wrongUser, questions: WRONG_NUMBER_QUESTIONS },
      ])),
    );

    const scorecard = buildScorecard(records);
    const machine = machineInfo(
      infra.postgresVersion + (process.env.DATABASE_URL ? ' (DATABASE_URL)' : ', local, fsync off'),
      process.env.TEMPORAL_ADDRESS ? 'TEMPORAL_ADDRESS' : 'dev server, in memory',
    );
    const durationSeconds = (performance.now() - startedAt) / 1000;
    console.log(`\n${await formatMarkdown(renderSummary(scorecard))}`);
    const written = await appendToEvalDoc(
      renderRun({ machine, build: buildLabel(), scorecard, records, damage, durationSeconds }),
    );
    say(
      `appended to ${written}; every turn in ${writeRunTurns(machine.date, records)} (${durationSeconds.toFixed(0)} s)`,
    );
    return 0;
  } finally {
    say('stopping');
    await stopAll();
  }
}

run()
  .then((code) => process.exit(code))
  .catch((err) => {
    console.error('[eval] could not run:', err);
    process.exit(1);
  });
