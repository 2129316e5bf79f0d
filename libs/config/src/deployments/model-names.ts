import type { DeploymentConfig, ModelAliasConfig, ModelNamesConfig } from '../config.types.js';

/** What an alias's name may be: a model name as clients spell it, `*` and `?` making it a pattern. */
export const ALIAS_NAME = /^[^\s,=]{1,128}$/;
export const ALIAS_NAME_TEXT = "1-128 characters other than spaces, ',' and '='; '*' and '?' make it a pattern";

/** Whether an alias's name is a glob pattern rather than one exact name. */
export const isPattern = (name: string): boolean => /[*?]/.test(name);

/** `*` matches any run of characters (none included), `?` any one; everything else only itself. */
export function globRegExp(pattern: string): RegExp {
  const body = [...pattern]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 's');
}

/**
 * MODEL_ALIASES: `name=deployment` pairs separated by commas, in order; an unreadable pair is a
 * problem and is left out.
 */
export function parseModelAliases(text: string | undefined, problems: string[]): ModelAliasConfig[] {
  if (text === undefined || text.trim() === '') return [];
  const aliases: ModelAliasConfig[] = [];
  for (const pair of text.split(',')) {
    const [name, deployment, ...rest] = pair.split('=').map((s) => s.trim());
    if (!name || !deployment || rest.length || !ALIAS_NAME.test(name)) {
      problems.push(`MODEL_ALIASES: "${pair.trim()}" is not name=deployment (the name: ${ALIAS_NAME_TEXT})`);
      continue;
    }
    aliases.push({ name, deployment });
  }
  return aliases;
}

/** How a problem names an alias, or the default: by its path in the file, or by its variable. */
export type AliasFieldName = (alias: ModelAliasConfig | null) => string;

/**
 * What the alias table says against the deployments: aliases of deployments that do not exist, names
 * given twice, and exact names a deployment already goes by (which would never be used).
 */
export function checkModelNames(
  names: ModelNamesConfig,
  deployments: readonly DeploymentConfig[],
  problems: string[],
  field: AliasFieldName,
): void {
  const ids = new Set(deployments.map((d) => d.id));
  const known = [...ids].map((id) => `"${id}"`).join(', ');
  const seen = new Set<string>();
  for (const alias of names.aliases) {
    if (!ids.has(alias.deployment)) {
      problems.push(
        `${field(alias)}: "${alias.name}" reaches "${alias.deployment}", which is not a deployment (deployments: ${known})`,
      );
    }
    if (ids.has(alias.name)) problems.push(`${field(alias)}: "${alias.name}" is already a deployment's id`);
    if (seen.has(alias.name)) problems.push(`${field(alias)}: "${alias.name}" is given twice`);
    seen.add(alias.name);
  }
  if (names.defaultDeployment !== null && !ids.has(names.defaultDeployment)) {
    problems.push(`${field(null)}: "${names.defaultDeployment}" is not a deployment (deployments: ${known})`);
  }
}

/**
 * Which deployment a requested model name reaches: a deployment's own id first, then an exact alias,
 * then the first pattern that matches in the order declared, then the default deployment, if any.
 */
export class ModelNames {
  private readonly byId: Map<string, DeploymentConfig>;
  private readonly exact = new Map<string, DeploymentConfig>();
  private readonly patterns: Array<{ match: RegExp; deployment: DeploymentConfig }> = [];
  private readonly fallback: DeploymentConfig | undefined;

  constructor(deployments: readonly DeploymentConfig[], names: ModelNamesConfig) {
    this.byId = new Map(deployments.map((d) => [d.id, d]));
    for (const { name, deployment } of names.aliases) {
      const target = this.byId.get(deployment);
      if (!target) continue; // refused at start-up; never here with a checked config
      if (!isPattern(name)) {
        if (!this.exact.has(name)) this.exact.set(name, target);
      } else this.patterns.push({ match: globRegExp(name), deployment: target });
    }
    this.fallback = names.defaultDeployment === null ? undefined : this.byId.get(names.defaultDeployment);
  }

  /** The deployment `model` reaches, or undefined when nothing names it and there is no default. */
  resolve(model: string): DeploymentConfig | undefined {
    return (
      this.byId.get(model) ??
      this.exact.get(model) ??
      this.patterns.find((p) => p.match.test(model))?.deployment ??
      this.fallback
    );
  }

  /** The exact aliases, in the order declared, with their deployments: patterns name no one model to list. */
  listable(): Array<{ name: string; deployment: DeploymentConfig }> {
    return [...this.exact].map(([name, deployment]) => ({ name, deployment }));
  }
}
