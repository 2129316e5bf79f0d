import { BATCHES_VARS } from './batches.vars.js';
import { DEPLOYMENTS_VARS } from './deployments.vars.js';
import { DEVELOPMENT_VARS } from './development.vars.js';
import type { EnvVarSpec } from './env-var.js';
import { FILES_VARS } from './files.vars.js';
import { LIMITS_VARS } from './limits.vars.js';
import { LOGGING_VARS } from './logging.vars.js';
import { REDIS_VARS } from './redis.vars.js';
import { SECURITY_VARS } from './security.vars.js';
import { SERVER_VARS } from './server.vars.js';
import { TOOLS_VARS } from './tools.vars.js';
import { TRACING_VARS } from './tracing.vars.js';
import { WORKERS_VARS } from './workers.vars.js';

/** Each section of the reference, in its order: a few words under its heading, and its variables. */
const BY_SECTION = {
  Server: {
    about: 'Where the API listens, and how long it waits for clients, for workers and, on shutdown, for itself.',
    vars: SERVER_VARS,
  },
  Security: { about: 'Who may call the API, and by which names it may be reached.', vars: SECURITY_VARS },
  Limits: { about: 'What one request may carry, and how many may wait.', vars: LIMITS_VARS },
  Redis: { about: 'Where Redis is, and how long what the platform keeps there lives.', vars: REDIS_VARS },
  Deployments: {
    about: 'The deployment the environment describes when no file is named, and the defaults of every deployment.',
    vars: DEPLOYMENTS_VARS,
  },
  Workers: { about: 'What a worker serves, how it holds its jobs, and what it runs them with.', vars: WORKERS_VARS },
  Batches: { about: 'How big a batch may be, and how the API replicas drive it.', vars: BATCHES_VARS },
  Files: {
    about:
      "Where uploaded files and batch results are kept. The `AWS_` variables are the AWS SDK's own: the platform checks the endpoint and region, and leaves the keys to the SDK.",
    vars: FILES_VARS,
  },
  Logging: { about: 'What the API and the workers log, and how.', vars: LOGGING_VARS },
  Tracing: {
    about: 'OpenTelemetry traces, off unless an OTLP endpoint is set. See [tracing](operations/tracing.md).',
    vars: TRACING_VARS,
  },
  Tools: {
    about: 'The command-line tools beside the platform: `npm run batch` and `npm run build:llama-server`.',
    vars: TOOLS_VARS,
  },
  'Build and development': { about: 'Read by the tests only.', vars: DEVELOPMENT_VARS },
} as const satisfies Record<string, { about: string; vars: Record<string, EnvVarSpec> }>;

export type EnvSection = keyof typeof BY_SECTION;
/** A variable with its name and section, as the reference lists it. */
export type DeclaredEnvVar = EnvVarSpec & { name: string; section: EnvSection };

/** Every variable the platform, its tools and its tests read: nothing is read that is not here. */
export const ENV_VARS = {
  ...SERVER_VARS,
  ...SECURITY_VARS,
  ...LIMITS_VARS,
  ...REDIS_VARS,
  ...DEPLOYMENTS_VARS,
  ...WORKERS_VARS,
  ...BATCHES_VARS,
  ...FILES_VARS,
  ...LOGGING_VARS,
  ...TRACING_VARS,
  ...TOOLS_VARS,
  ...DEVELOPMENT_VARS,
};

type Vars = typeof ENV_VARS;
export type EnvName = keyof Vars;
type NamesWhere<Shape> = { [N in EnvName]: Vars[N] extends Shape ? N : never }[EnvName];
/** Variables of one kind, so a reader method only takes names it can read. */
export type IntName = NamesWhere<{ kind: 'int' }>;
export type BoolName = NamesWhere<{ kind: 'bool' }>;
export type EnumName = NamesWhere<{ kind: 'enum' }>;
/** Variables read as text with their declared default: free text, or an enum its reader checks itself. */
export type StringName = NamesWhere<{ default: string }>;
/** Variables whose declaration has a default value, which a read without a fallback of its own uses. */
export type DefaultedName = NamesWhere<{ default: unknown }>;
export type EnumValue<N extends EnumName> = Vars[N] extends { values: readonly (infer V)[] } ? V : never;

export const isDeclared = (name: string): name is EnvName => Object.hasOwn(ENV_VARS, name);

/** A read of a variable the reference does not declare: the code's mistake, not the operator's. */
export class UndeclaredVariableError extends Error {
  constructor(name: string) {
    super(`${name} is not declared: add it, with its default and meaning, to libs/config/src/env before reading it`);
    this.name = 'UndeclaredVariableError';
  }
}

/** The declaration of a variable; throws for a name the reference does not declare. */
export function declaration(name: EnvName): EnvVarSpec {
  if (!isDeclared(name)) throw new UndeclaredVariableError(name);
  return ENV_VARS[name];
}

/** The reference's sections, each with its variables in order. */
export function declaredSections(): { section: EnvSection; about: string; vars: DeclaredEnvVar[] }[] {
  return Object.entries(BY_SECTION).map(([section, { about, vars }]) => ({
    section: section as EnvSection,
    about,
    vars: Object.entries(vars).map(([name, spec]: [string, EnvVarSpec]) => ({
      ...spec,
      name,
      section: section as EnvSection,
    })),
  }));
}
