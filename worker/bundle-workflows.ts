/**
 * `npm run build`'s last step: the workflow bundle (bundleWorkflowCode over workflows/), written once to
 * a file that workers load through WORKFLOW_BUNDLE_PATH instead of bundling at every start (seconds of
 * CPU and webpack's memory on each one).
 *
 *   node dist/worker/bundle-workflows.js [<out file>]     default: dist/workflow-bundle.js
 *
 * Run from dist/, it bundles the compiled workflows beside it, so the bundle and the activities a
 * worker runs come from the same build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PROJECT_ROOT } from '../platform/project-root';
import { quietBundlerLogger, turnWorkflowBundleOptions } from './create-worker';

const DEFAULT_BUNDLE_PATH = path.join(PROJECT_ROOT, 'dist', 'workflow-bundle.js');

async function run() {
  const out = path.resolve(process.argv[2] ?? DEFAULT_BUNDLE_PATH);
  const { code } = await bundleWorkflowCode({ ...turnWorkflowBundleOptions, logger: quietBundlerLogger });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  // Written whole under another name, then renamed: a worker starting meanwhile reads the old or the new.
  fs.writeFileSync(`${out}.tmp`, code);
  fs.renameSync(`${out}.tmp`, out);
  console.log(
    `workflow bundle: ${path.relative(process.cwd(), out) || out} (${(code.length / 2 ** 20).toFixed(2)} MiB)`,
  );
}

run().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
