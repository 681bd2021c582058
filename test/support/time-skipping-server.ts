/**
 * Temporal's time-skipping test server (Java), for workflow suites whose subject is a long wait (a question's
 * deadline): @temporalio/testing's createTimeSkipping() downloads it, which cannot work here, so its classpath comes
 * from Maven (test/time-skipping/pom.xml, resolved once into .data/) and a small script runs it with the arguments the
 * SDK's launcher passes (the port, --enable-time-skipping).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';

const ROOT = path.resolve(__dirname, '..', '..');
const DIR = path.join(ROOT, '.data', 'time-skipping');

/** The script that starts the test server, its classpath resolved first if this checkout has none yet. */
function testServerScript(): string {
  const classpath = path.join(DIR, 'classpath.txt');
  const script = path.join(DIR, 'test-server.sh');
  if (!fs.existsSync(classpath)) {
    fs.mkdirSync(DIR, { recursive: true });
    execFileSync(
      'mvn',
      [
        '-q',
        '-f',
        path.join(ROOT, 'test', 'time-skipping', 'pom.xml'),
        'dependency:build-classpath',
        `-Dmdep.outputFile=${classpath}`,
      ],
      { stdio: 'inherit' },
    );
  }
  fs.writeFileSync(
    script,
    `#!/bin/sh\nexec java -cp "$(cat '${classpath}')" io.temporal.testserver.TestServer "$@"\n`,
    { mode: 0o755 },
  );
  return script;
}

export function createTimeSkippingTestEnvironment(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: testServerScript() } },
  });
}
