import { Inject, Injectable } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type PlatformConfig } from '@conveyor/config';
import { ErrorCode, type BatchError } from '@conveyor/openai';
import { TokenQuota } from '../auth/token-quota.service.js';
import { estimateTokens } from '../generation/token-estimate.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { MESSAGES_URL, outputPurpose, type BatchRecord } from '../repositories/batch-record.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { UnqueuedLines } from '../repositories/unqueued-lines.port.js';
import { BatchInput, type InputWatch } from './batch-input.reader.js';
import { PlanBuilder, type BatchPlan } from './batch-plan.js';
import { BatchPlans } from './batch-plans.js';
import { DigestTable } from './digest-table.js';
import type { LeasedBatch } from './leased-batch.js';
import { prefixKey, repeatKey } from './line-keys.js';

const MAX_REPORTED_ERRORS = 100;

/**
 * What reading a batch's whole input found: its errors, its lines, how many lines go to each deployment,
 * and the tokens its valid lines may use (estimated as a request's are).
 */
interface Checked {
  errors: BatchError[];
  total: number;
  /** Lines to feed to each deployment (repeats folded into another line not counted). */
  byDeployment: Map<string, number>;
  tokens: number;
  plan: BatchPlan;
}
const now = () => Math.floor(Date.now() / 1000);

/**
 * Checks a new batch's whole input before any line is queued: every line must be runnable, each
 * custom_id used once, and the file neither empty nor longer than BATCH_MAX_LINES. A batch that passes
 * starts (with an empty output file, so output can be read from the first result on, and its lines
 * counted per deployment as not yet queued, for autoscaling); one that does not fails with the
 * reasons, and ends. A batch also reserves its estimated tokens against its owner's daily token quota
 * as it starts, or fails (`token_limit_exceeded`, as OpenAI's batches do past their enqueued token
 * limit) when the day has no room for them; the per-minute quota does not apply to batch lines.
 */
@Injectable()
export class BatchValidator {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly input: BatchInput,
    private readonly batches: BatchRecords,
    private readonly store: FileStore,
    private readonly unqueued: UnqueuedLines,
    private readonly quota: TokenQuota,
    private readonly plans: BatchPlans,
    private readonly metrics: PlatformMetrics,
  ) {}

  async validate(batch: BatchRecord, state: InputWatch & Pick<LeasedBatch, 'finish' | 'holdOn'>): Promise<void> {
    const { errors, total, byDeployment, tokens, plan } = await this.check(batch, state);
    // The check may have outlasted the lease many times over: nothing is written unless it is still ours.
    await state.holdOn();
    const latest = await this.batches.get(batch.id);
    const startedAt = Date.now();
    // Its lines settle against the day it started in (`in_progress_at`), so the two are one instant.
    if (!errors.length) {
      const refused = await this.quota.reserveBatch(batch.owner, batch.id, { tokens, lines: total }, startedAt);
      if (refused) errors.push(refused);
    }
    if (errors.length) {
      await this.batches.end(batch.id, { status: 'failed', failed_at: now(), errors, total });
      return state.finish();
    }
    const output = await this.store.create({
      filename: `${batch.id}_output.jsonl`,
      purpose: outputPurpose(batch),
      owner: batch.owner,
    });
    // Saved before the batch runs: every replica that drives it feeds it in the same order.
    const planFile = await this.plans.save(batch, plan);
    this.metrics.batchPlan.groups.inc(plan.groups);
    // Counted before the batch runs, so the pool scales for the whole batch from its first tick; set
    // again (the same counts) if this replica stops before the status below is written.
    await this.unqueued.expect(batch.id, byDeployment);
    // Results are written as lines finish, so the output file exists (and can be read) from the start.
    await this.batches.update(batch.id, {
      status: latest?.cancel_requested ? 'cancelling' : 'in_progress',
      in_progress_at: Math.floor(startedAt / 1000),
      total,
      output_file_id: output.id,
      plan_file_id: planFile,
      plan: plan.summary(),
    });
  }

  /** Streams the whole input once: the first errors in line order, then the whole file's, and the plan. */
  private async check(batch: BatchRecord, state: InputWatch & Pick<LeasedBatch, 'holdOn'>): Promise<Checked> {
    const planner = new PlanBuilder(batch.fold_repeats !== false);
    const errors: BatchError[] = [];
    const byDeployment = new Map<string, number>();
    let errorCount = 0;
    // Every custom_id read so far, kept as a digest: a million of them as strings would take 100 MB.
    const seen = new DigestTable();
    let total = 0;
    let tokens = 0;
    let heldAt = Date.now();
    for await (const parsed of await this.input.open(batch, state)) {
      total++;
      // A third of the lease between renewals, so a slow read never lets it lapse.
      if (Date.now() - heldAt > this.config.batch.leaseMs / 3) {
        await state.holdOn();
        heldAt = Date.now();
      }
      let error = parsed.ok ? null : parsed.error;
      if (parsed.ok) {
        if (seen.setIfAbsent(parsed.value.customId, parsed.line) !== undefined) {
          error = {
            code: ErrorCode.duplicateCustomId,
            message: `Line ${parsed.line}: custom_id '${parsed.value.customId}' is used more than once.`,
            param: 'custom_id',
            line: parsed.line,
          };
        }
        const { deployment, body, customId, sent } = parsed.value;
        if (!error) {
          const job = body.toJob(customId, deployment);
          tokens += estimateTokens(job, deployment);
          if (planner.add(parsed.line, customId, prefixKey(job), repeatKey(job, batch.endpoint, sent))) {
            byDeployment.set(deployment.id, (byDeployment.get(deployment.id) ?? 0) + 1);
          }
        }
      }
      if (error && errorCount++ < MAX_REPORTED_ERRORS) errors.push(error);
    }
    // A message batch's requests were counted against its own limit as its body was read.
    const maxLines =
      batch.endpoint === MESSAGES_URL ? this.config.batch.messageBatch.maxRequests : this.config.batch.maxLines;
    if (total > maxLines) {
      errors.unshift({
        code: ErrorCode.tooManyLines,
        message: `The file has ${total} lines; a batch may have at most ${maxLines}.`,
        param: null,
        line: null,
      });
    }
    if (total === 0) {
      errors.push({ code: ErrorCode.emptyFile, message: 'The input file has no requests.', param: null, line: null });
    }
    if (errorCount > MAX_REPORTED_ERRORS) {
      errors.push({
        code: ErrorCode.tooManyErrors,
        message: `${errorCount - MAX_REPORTED_ERRORS} more invalid lines are not listed.`,
        param: null,
        line: null,
      });
    }
    return { errors, total, byDeployment, tokens, plan: planner.build() };
  }
}
