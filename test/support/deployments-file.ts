import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** Writes a deployments file (YAML) to a fresh temporary folder and returns its path. */
export function writeDeploymentsFile(content: object): string {
  const path = join(mkdtempSync(join(tmpdir(), 'conveyor-')), 'conveyor.yaml');
  writeFileSync(path, stringify(content));
  return path;
}
