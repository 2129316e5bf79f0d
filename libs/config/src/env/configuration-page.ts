import { format, resolveConfig } from 'prettier';
import { deploymentsFileTables } from '../file/deployments-file.reference.js';
import { declaredSections, type DeclaredEnvVar } from './env-vars.js';

const INTRO = `# Configuration

<!-- Generated from libs/config/src/env by npm run docs:config: edit the declarations there, not this page. -->

The API and every worker read their configuration from environment variables, once, at start-up, and
must be given the same Redis, prefix and deployments. A bad value stops the process with one message
naming every offending variable, such as \`PORT must be an integer from 0 to 65535 (got "eighty")\`.
Values are trimmed and a blank variable counts as unset; booleans take \`true\`, \`1\` or \`yes\` and
\`false\`, \`0\` or \`no\`, in any case.

One deployment comes from the variables of [Deployments](#deployments). Several, and API keys with
names and rate limits, come from [the deployments file](#the-deployments-file) that \`CONVEYOR_CONFIG\`
names instead, whose deployments take their defaults from the same variables.

[Tools](#tools) and [Build and development](#build-and-development) list what the command-line tools,
the tests and the benches read; the API and the workers never read those.`;

const UNITS: Array<{ suffix: RegExp; steps: Array<[number, string]>; unit: string }> = [
  {
    suffix: /_MS$/,
    steps: [
      [3_600_000, 'h'],
      [60_000, 'min'],
      [1000, 's'],
    ],
    unit: 'ms',
  },
  {
    suffix: /_SECONDS$/,
    steps: [
      [86_400, 'days'],
      [3600, 'h'],
      [60, 'min'],
    ],
    unit: 's',
  },
  {
    suffix: /_BYTES$/,
    steps: [
      [1024 ** 3, 'GiB'],
      [1024 ** 2, 'MiB'],
      [1024, 'KiB'],
    ],
    unit: 'bytes',
  },
];

const SINGULAR: Record<string, string> = { days: 'day', bytes: 'byte' };

/** A duration or a size in the largest unit that writes it whole (`600000` ms: 10 min); null for plain numbers. */
function inWords(name: string, value: number): string | null {
  const kind = UNITS.find((u) => u.suffix.test(name));
  if (!kind) return null;
  const step = kind.steps.find(([size]) => value >= size && value % size === 0);
  const [count, unit] = step ? [value / step[0], step[1]] : [value, kind.unit];
  return `${count} ${count === 1 ? (SINGULAR[unit] ?? unit) : unit}`;
}

const code = (value: string | number | boolean): string => `\`${value}\``;

function defaultCell(v: DeclaredEnvVar): string {
  if (v.defaultText !== undefined) return v.defaultText;
  const value = v.default!;
  const words = typeof value === 'number' ? inWords(v.name, value) : null;
  return words ? `${code(value)} (${words})` : code(value);
}

function allowedCell(v: DeclaredEnvVar): string {
  if (v.allowedText !== undefined) return v.allowedText;
  switch (v.kind) {
    case 'int': {
      const [min, max] = [inWords(v.name, v.min), inWords(v.name, v.max)];
      return `${code(v.min)} to ${code(v.max)}` + (min && max ? ` (${min} to ${max})` : '');
    }
    case 'enum':
      return v.values.map(code).join(', ');
    case 'bool':
      return `${code(true)} or ${code(false)}`;
    case 'text':
      return 'text';
  }
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

function sectionMarkdown({ section, about, vars }: ReturnType<typeof declaredSections>[number]): string {
  const rows = vars.map((v) => [code(v.name), defaultCell(v), allowedCell(v), v.meaning].map(cell).join(' | '));
  return [
    `## ${section}`,
    about,
    ['| Variable | Default | Allowed | Meaning |', '| --- | --- | --- | --- |', ...rows.map((r) => `| ${r} |`)].join(
      '\n',
    ),
  ].join('\n\n');
}

const DEPLOYMENTS_FILE = `## The deployments file

The YAML file (JSON when its name ends in \`.json\`) that \`CONVEYOR_CONFIG\` names. A field out of range
stops start-up with a message naming it by its path, such as \`deployments[0].pool must be one of the
following values: cpu, gpu\`. Its fields and their checks are declared in
\`libs/config/src/file/deployments-file.dto.ts\`, and their meanings beside it.

\`\`\`yaml
deployments:
  - id: qwen-small
    model: hf:bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q8_0
    parallel: 4
    defaults: { temperature: 0.1, top_k: 50 }
    alias: { org: acme, app: chat }
  - id: qwen-vl
    upstream: { url: http://10.0.0.9:8000/v1, apiKeyEnv: VLLM_API_KEY, model: Qwen/Qwen2.5-VL-7B-Instruct }
    vision: true
apiKeys:
  - name: team-a
    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
    rateLimit: { requests: 600, perSeconds: 60 }
\`\`\``;

function deploymentsFileMarkdown(): string {
  const tables = deploymentsFileTables().map(
    ({ path, table }) => `### ${path === 'top level' ? 'Top level' : `\`${path}\``}\n\n${table}`,
  );
  return [DEPLOYMENTS_FILE, ...tables].join('\n\n');
}

/**
 * docs/configuration.md: the declarations of ./env, one table per section, formatted by prettier with
 * the options it has for `path`, so the committed page passes the format check as it is generated.
 */
export async function renderConfigurationPage(path: string): Promise<string> {
  const markdown = [INTRO, ...declaredSections().map(sectionMarkdown), deploymentsFileMarkdown()].join('\n\n');
  return format(markdown, { ...(await resolveConfig(path)), filepath: path, parser: 'markdown' });
}
