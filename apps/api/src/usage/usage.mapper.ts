import type { UsageCompletionsResult, UsageGroupBy } from '@conveyor/openai';
import type { UsageGroup } from '../repositories/usage-ledger.port.js';

/** A result's grouping fields: each grouped-by field's value, null for the others. */
type Grouping = Pick<UsageCompletionsResult, 'api_key_id' | 'model' | 'batch' | 'route'>;

function groupingOf(group: UsageGroup, by: ReadonlySet<UsageGroupBy>): Grouping {
  return {
    api_key_id: by.has('api_key_id') ? group.key : null,
    model: by.has('model') ? group.deployment : null,
    batch: by.has('batch') ? group.batch : null,
    ...(by.has('route') ? { route: group.route } : {}),
  };
}

/** A bucket's groups summed by what the query groups by, as the Usage API's completions results. */
export function toUsageResults(groups: readonly UsageGroup[], by: ReadonlySet<UsageGroupBy>): UsageCompletionsResult[] {
  const results = new Map<string, UsageCompletionsResult>();
  for (const group of groups) {
    const grouping = groupingOf(group, by);
    const id = JSON.stringify(grouping);
    const result = results.get(id) ?? {
      object: 'organization.usage.completions.result',
      input_tokens: 0,
      output_tokens: 0,
      input_cached_tokens: 0,
      input_audio_tokens: 0,
      output_audio_tokens: 0,
      num_model_requests: 0,
      project_id: null,
      user_id: null,
      service_tier: null,
      ...grouping,
    };
    result.input_tokens += group.inputTokens;
    result.output_tokens += group.outputTokens;
    result.input_cached_tokens += group.cachedTokens;
    result.num_model_requests += group.requests;
    results.set(id, result);
  }
  return [...results.values()];
}
