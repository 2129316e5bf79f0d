import { format, resolveConfig } from 'prettier';
import { conveyorDashboard } from './grafana-dashboard.js';

/** The dashboard's JSON file at `path`, formatted as prettier formats it there, so the committed file passes the format check. */
export async function renderDashboard(path: string): Promise<string> {
  return format(JSON.stringify(conveyorDashboard()), {
    ...(await resolveConfig(path)),
    filepath: path,
    parser: 'json',
  });
}
