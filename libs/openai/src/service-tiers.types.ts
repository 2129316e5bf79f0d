/**
 * OpenAI's `service_tier`, as chat completions and Responses ask for it: `priority` ahead of `default`
 * ahead of `flex`; `auto` is `default`. A reply says the tier it was served at (never `auto`).
 */
export const SERVICE_TIERS = ['auto', 'default', 'flex', 'priority'] as const;
export type ServiceTier = (typeof SERVICE_TIERS)[number];
export type ServedTier = Exclude<ServiceTier, 'auto'>;

/** Anthropic's request `service_tier`: `auto` uses priority capacity where the key has it; `standard_only` never. */
export const ANTHROPIC_SERVICE_TIERS = ['auto', 'standard_only'] as const;
export type AnthropicServiceTier = (typeof ANTHROPIC_SERVICE_TIERS)[number];
/** Anthropic's `usage.service_tier` in a reply. */
export type AnthropicUsageTier = 'standard' | 'priority' | 'batch';
