// Writes the metrics reference from the metric declarations, or checks that a committed copy still
// matches them:
//   node dist/libs/metrics/src/metrics-docs.cli.js --write docs/metrics.md
//   node dist/libs/metrics/src/metrics-docs.cli.js --check docs/metrics.md   (exit 1 when it drifted)
import { resolve } from 'node:path';
import { generatedFileCli } from '@conveyor/config';
import { renderMetricsPage } from './metrics-page.js';

await generatedFileCli('metrics-docs.cli.js', (path) => renderMetricsPage(resolve(path)), {
  source: 'the metric declarations',
  matched: 'the declarations',
  command: 'npm run docs:metrics',
});
