#!/usr/bin/env node
// The `amy` command that npm links. The CLI itself is one bundle that the repository's postinstall
// builds into dist/; a checkout that was never installed gets told so rather than a module error.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/amy.mjs', import.meta.url);
if (!existsSync(bundle)) {
  console.error('error: the amy CLI is not built yet: run `npm install` in the repository root.');
  process.exit(2);
}
await import(bundle.href);
