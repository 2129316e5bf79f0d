import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { validateDto } from '@conveyor/protocol';
import { parse as parseYaml } from 'yaml';
import { DeploymentsFileDto } from './deployments-file.dto.js';

/** Reads and validates the deployments file; returns the problem, naming the field, instead of throwing. */
export function readDeploymentsFile(
  path: string,
): { ok: true; value: DeploymentsFileDto } | { ok: false; problem: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return {
      ok: false,
      problem: `CONVEYOR_CONFIG: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    };
  }
  let raw: unknown;
  try {
    raw = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    return {
      ok: false,
      problem: `${path}: not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`,
    };
  }
  const result = validateDto(DeploymentsFileDto, raw);
  if (!result.ok) return { ok: false, problem: `${path}: ${result.problem.message}` };
  return result;
}
