// Writes the fleet's Grafana dashboard from the metric declarations, or checks that a committed copy
// still matches them:
//   node dist/libs/metrics/src/dashboard.cli.js --write infra/grafana/conveyor-fleet.json
//   node dist/libs/metrics/src/dashboard.cli.js --check infra/grafana/conveyor-fleet.json   (exit 1 when it drifted)
import { resolve } from 'node:path';
import { generatedFileCli } from '@conveyor/config';
import { renderDashboard } from './dashboard-file.js';

await generatedFileCli('dashboard.cli.js', (path) => renderDashboard(resolve(path)), {
  source: 'the metric declarations',
  matched: 'the declarations',
  command: 'npm run dashboard',
});
