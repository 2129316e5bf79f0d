import { readFileSync, writeFileSync } from 'node:fs';

/** What a generated file is made from, as its CLI tells someone whose copy has drifted. */
export interface GeneratedFrom {
  /** What the file must match, e.g. "the declared variables". */
  source: string;
  /** The same, said once it matches, e.g. "the declarations". */
  matched: string;
  /** The command that writes it afresh, e.g. "npm run docs:config". */
  command: string;
}

/**
 * The command line of a file generated from the code (the OpenAPI document, the configuration page):
 * `--write <path>` writes it; `--check <path>` exits 1 when the copy at `path` no longer matches (a
 * missing copy too), so CI can tell a change that forgot to regenerate it.
 */
export async function generatedFileCli(
  script: string,
  render: (path: string) => Promise<string>,
  from: GeneratedFrom,
): Promise<void> {
  const [mode, path] = process.argv.slice(2);
  if ((mode !== '--write' && mode !== '--check') || !path) {
    console.error(`usage: ${script} --write|--check <path>`);
    process.exit(2);
  }
  const text = await render(path);
  if (mode === '--write') {
    writeFileSync(path, text);
    console.log(`Wrote ${path}`);
    return;
  }
  let committed = '';
  try {
    committed = readFileSync(path, 'utf8');
  } catch {
    // A missing copy is a drift like any other.
  }
  if (committed !== text) {
    console.error(`${path} does not match ${from.source}: run ${from.command} and commit it.`);
    process.exit(1);
  }
  console.log(`${path} matches ${from.matched}.`);
}
