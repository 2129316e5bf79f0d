import { createHash } from 'node:crypto';
import { canonicalPrompt, isGenerationJob, type EmbedJobData, type GenerationJobData } from '@conveyor/queue';

/**
 * What the batch plan tells lines apart by, told from the request alone: the API never loads a model, so
 * it cannot see tokens, only the text the worker's prompt is rendered from.
 */
const digest = (text: string): string => createHash('sha1').update(text).digest('hex').slice(0, 20);

/**
 * The key of the leading part a line's prompt shares with others: its deployment, its tools and every turn
 * but the last (the system prompt and any leading turns). Lines with the same key begin with the same
 * tokens once rendered, so a worker computes that beginning once and reuses its cells for the rest.
 * Legacy prompts and embeddings have no turns to share: their lines share only their deployment.
 */
export function prefixKey(job: GenerationJobData | EmbedJobData): string {
  if (!isGenerationJob(job) || job.prompts) return digest(`D\u0001${job.deployment}`);
  const lead = canonicalPrompt({ messages: job.messages.slice(0, -1), tools: job.tools, cacheKey: job.cacheKey });
  return digest(`D\u0001${job.deployment}\u0001${job.cacheKey ?? ''}\u0001${lead ?? ''}`);
}

/**
 * The key under which lines are one request asked again, or null when a line must run on its own. Two
 * lines share it when their bodies are the same after canonical ordering (keys sorted at every level) and
 * their reply does not depend on chance: greedy (temperature 0) or with a fixed seed; an embedding always.
 * A line that samples without a seed is a fresh draw each time, which its author may well want, so it
 * always runs.
 */
export function repeatKey(job: GenerationJobData | EmbedJobData, url: string, body: unknown): string | null {
  if (isGenerationJob(job) && job.sampling.temperature !== 0 && job.sampling.seed === undefined) return null;
  return digest(`${url}\u0001${job.deployment}\u0001${canonicalJson(body)}`);
}

/** JSON with every object's keys in sorted order, so bodies that differ only in key order are one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
