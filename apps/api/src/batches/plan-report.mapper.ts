import type { BatchPlanReport } from '@conveyor/openai';
import type { BatchRecord } from '../repositories/batch-record.js';

/** What a batch's plan did, as both families of batch objects show it; nothing before the batch is validated. */
export function planReport(r: BatchRecord): { plan?: BatchPlanReport } {
  if (!r.plan) return {};
  const total = r.prompt_tokens ?? 0;
  const cached = r.cached_tokens ?? 0;
  const folded = r.folded_tokens ?? 0;
  return {
    plan: {
      groups: r.plan.groups,
      repeats_folded: r.plan.folded,
      prompt_tokens: { total, cached, folded },
      prompt_tokens_saved: cached + folded,
    },
  };
}
