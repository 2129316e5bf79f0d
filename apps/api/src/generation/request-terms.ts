import { DEFAULT_KEY_TIERS, type ApiKeyConfig, type DeploymentConfig } from '@conveyor/config';
import type { ServiceTier } from '@conveyor/openai';
import type { QueueTier } from '@conveyor/queue';

/** What a request asks for of its own beside its body's job: a service tier, and a deadline (its headers). */
export interface AskedTerms {
  /** OpenAI's `service_tier` as the request named it (Anthropic's `auto`: `priority`; `standard_only`: `default`). */
  tier?: ServiceTier | null;
  /** Milliseconds from receipt the client waits for its answer; null: it named none. */
  deadlineMs?: number | null;
}

/** What a request is queued under once its key and deployment have had their say. */
export interface SettledTerms {
  tier: QueueTier;
  /** Milliseconds from receipt; null: no deadline. */
  deadlineMs: number | null;
}

/**
 * The tier a request is served at: the one it asked for where its key may use it, else `default`
 * (as OpenAI serves a tier a project lacks); `auto` is `default`. A caller with no key's settings
 * (authentication off) has the keys' default tiers.
 */
export function servedTier(asked: ServiceTier | null | undefined, key: ApiKeyConfig | null): QueueTier {
  const allowed = key?.tiers ?? DEFAULT_KEY_TIERS;
  if (!asked || asked === 'auto' || !allowed.includes(asked)) return 'default';
  return asked;
}

/** The shortest of the request's, its key's and its deployment's deadlines; null when none names one. */
export function settledDeadline(
  asked: number | null | undefined,
  key: ApiKeyConfig | null,
  deployment: DeploymentConfig,
): number | null {
  const given = [asked, key?.deadlineMs, deployment.deadlineMs].filter((ms): ms is number => typeof ms === 'number');
  return given.length ? Math.min(...given) : null;
}
