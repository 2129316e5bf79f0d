import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderConfigurationPage } from './configuration-page.js';
import { ENV_VARS } from './env-vars.js';
import { differingLines } from '../../../../test/support/differing-lines.js';

const PAGE = resolve(import.meta.dirname, '../../../../docs/configuration.md');

describe('docs/configuration.md', () => {
  it('is what the declared variables generate (npm run docs:config rewrites it)', async () => {
    const generated = await renderConfigurationPage(PAGE);
    expect(differingLines(readFileSync(PAGE, 'utf8'), generated)).toEqual([]);
  });

  it("has one row per declared variable, with its default, range and meaning, then the deployments file's fields", async () => {
    const page = await renderConfigurationPage(PAGE);
    const [variables, file] = page.split('\n## The deployments file\n');
    const rows = variables!.split('\n').filter((line) => line.startsWith('| `'));
    expect(rows.map((row) => /^\| `([A-Z0-9_]+)`/.exec(row)?.[1])).toEqual(
      expect.arrayContaining(Object.keys(ENV_VARS)),
    );
    expect(rows).toHaveLength(Object.keys(ENV_VARS).length);
    expect(rows).toContain(
      '| `BATCH_TICK_MS` | `100` (100 ms) | `10` to `60000` (10 ms to 1 min) | How often the API replica driving a batch collects its results and queues more of its lines. |',
    );
    expect(rows).toContain(
      '| `LOG_LEVEL` | `log` | `error`, `warn`, `log`, `debug`, `verbose` | The least severe level logged; each level includes those before it. |',
    );
    expect(file).toContain('### `deployments[]`');
    expect(file).toContain(
      '| `contextSize` | `CONTEXT_SIZE` | an integer of at least `64` | Tokens of context per sequence. |',
    );
  });
});
