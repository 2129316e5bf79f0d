// Writes the configuration reference from the declared environment variables, or checks that a
// committed copy still matches them:
//   node dist/libs/config/src/config-docs.cli.js --write docs/configuration.md
//   node dist/libs/config/src/config-docs.cli.js --check docs/configuration.md   (exit 1 when it drifted)
import { resolve } from 'node:path';
import { renderConfigurationPage } from './env/configuration-page.js';
import { generatedFileCli } from './generated-file.js';

await generatedFileCli('config-docs.cli.js', (path) => renderConfigurationPage(resolve(path)), {
  source: 'the declared variables',
  matched: 'the declarations',
  command: 'npm run docs:config',
});
