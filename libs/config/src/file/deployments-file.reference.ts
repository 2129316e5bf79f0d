import { SamplingPresetDto } from '@conveyor/protocol';
import { getMetadataStorage, type ValidationArguments } from 'class-validator';
import {
  ApiKeyDto,
  AppAliasDto,
  DeploymentDto,
  DeploymentsFileDto,
  ModelAliasDto,
  RateLimitDto,
  SimulatedDto,
  AdapterDto,
  TokenLimitDto,
  UpstreamDto,
  WebhookDto,
} from './deployments-file.dto.js';
import {
  ALIAS_FIELDS,
  API_KEY_FIELDS,
  DEFAULTS_FIELDS,
  DEPLOYMENT_FIELDS,
  FILE_FIELDS,
  MODEL_ALIAS_FIELDS,
  RATE_LIMIT_FIELDS,
  SIMULATED_FIELDS,
  ADAPTER_FIELDS,
  TOKEN_LIMIT_FIELDS,
  UPSTREAM_FIELDS,
  WEBHOOK_FIELDS,
  type FieldDoc,
} from './deployments-file.fields.js';

type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

const code = (value: unknown): string => `\`${String(value)}\``;

/** A check's own message without the field's name: "id must be 1-128 letters…" says "1-128 letters…". */
function messageOf(check: ValidationMetadata, field: string): string | null {
  const message =
    typeof check.message === 'function' ? check.message({} as ValidationArguments) : (check.message ?? null);
  return message === null ? null : message.replace(new RegExp(`^${field} must be `), '');
}

/** What a field takes, as its class-validator checks say it: the file is checked by them, so this cannot drift. */
function allowed(checks: ValidationMetadata[], field: string): string {
  const by = (name: string) => checks.find((c) => c.name === name);
  if (checks.some((c) => c.type === 'nestedValidation')) return by('isArray') ? 'a list (below)' : 'an object (below)';
  const worded = checks.map((c) => (c.name === 'isOptional' ? null : messageOf(c, field))).find((m) => m !== null);
  if (by('isIn')) return (by('isIn')!.constraints[0] as unknown[]).map(code).join(', ');
  if (by('isBoolean')) return `${code(true)} or ${code(false)}`;
  if (worded) return worded;
  const number = by('isInt') ? 'an integer' : by('isNumber') ? 'a number' : null;
  if (number) {
    const [min, max] = [by('min')?.constraints[0], by('max')?.constraints[0]];
    if (min !== undefined && max !== undefined) return `${number} from ${code(min)} to ${code(max)}`;
    return min !== undefined ? `${number} of at least ${code(min)}` : number;
  }
  return 'text';
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** One table: a row per documented field, its default and allowed values read from the DTO's checks. */
function fieldTable(dto: new () => object, docs: Record<string, FieldDoc>): string {
  const checks = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const rows = Object.entries(docs).map(([field, doc]) => {
    const own = checks.filter((c) => c.propertyName === field);
    const optional = own.some((c) => c.type === 'conditionalValidation');
    const fallback = doc.default ?? (optional ? 'none' : 'required');
    return `| ${[code(field), fallback, allowed(own, field), doc.meaning].map(cell).join(' | ')} |`;
  });
  return ['| Field | Default | Allowed | Meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** The deployments file's fields, one table per object in it, named by its path in the file. */
export function deploymentsFileTables(): Array<{ path: string; table: string }> {
  return [
    { path: 'top level', table: fieldTable(DeploymentsFileDto, FILE_FIELDS) },
    { path: 'deployments[]', table: fieldTable(DeploymentDto, DEPLOYMENT_FIELDS) },
    { path: 'deployments[].upstream', table: fieldTable(UpstreamDto, UPSTREAM_FIELDS) },
    { path: 'deployments[].simulated', table: fieldTable(SimulatedDto, SIMULATED_FIELDS) },
    { path: 'deployments[].adapters[]', table: fieldTable(AdapterDto, ADAPTER_FIELDS) },
    { path: 'deployments[].alias', table: fieldTable(AppAliasDto, ALIAS_FIELDS) },
    { path: 'deployments[].defaults', table: fieldTable(SamplingPresetDto, DEFAULTS_FIELDS) },
    { path: 'apiKeys[]', table: fieldTable(ApiKeyDto, API_KEY_FIELDS) },
    { path: 'apiKeys[].rateLimit', table: fieldTable(RateLimitDto, RATE_LIMIT_FIELDS) },
    { path: 'apiKeys[].tokenLimit', table: fieldTable(TokenLimitDto, TOKEN_LIMIT_FIELDS) },
    { path: 'apiKeys[].webhook', table: fieldTable(WebhookDto, WEBHOOK_FIELDS) },
    { path: 'modelAliases[]', table: fieldTable(ModelAliasDto, MODEL_ALIAS_FIELDS) },
  ];
}
