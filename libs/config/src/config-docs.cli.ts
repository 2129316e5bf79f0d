// Writes the configuration reference from the declared environment variables, or checks that a
// committed copy still matches them:
//   node dist/libs/config/src/config-docs.cli.js --write docs/configuration.md
//   node dist/libs/config/src/config-docs.cli.js --check docs/configuration.md   (exit 1 when it drifted)
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderConfigurationPage } from './env/configuration-page.js';

const [mode, path] = process.argv.slice(2);
if ((mode !== '--write' && mode !== '--check') || !path) {
  console.error('usage: config-docs.cli.js --write|--check <path>');
  process.exit(2);
}
const text = await renderConfigurationPage(resolve(path));
if (mode === '--write') {
  writeFileSync(path, text);
  console.log(`Wrote ${path}`);
} else {
  let committed = '';
  try {
    committed = readFileSync(path, 'utf8');
  } catch {
    // A missing copy is a drift like any other.
  }
  if (committed !== text) {
    console.error(`${path} does not match the declared variables: run npm run docs:config and commit it.`);
    process.exit(1);
  }
  console.log(`${path} matches the declarations.`);
}
