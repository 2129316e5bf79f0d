import { Inject, Injectable, Logger } from '@nestjs/common';
import { FileStore } from '@conveyor/batch-store';
import { batchLineJobId, type BatchLineResult, type TokenUsage } from '@conveyor/queue';
import { TokenQuota } from '../auth/token-quota.service.js';
import {
  BATCH_ENDPOINTS,
  type BatchEndpoints,
  type BatchResultLine,
  type NotRunCode,
} from '../contracts/batch-endpoint.js';
import { PlatformMetrics } from '../metrics/platform-metrics.service.js';
import { BatchLines, type CollectedResults } from '../repositories/batch-lines.port.js';
import { outputPurpose, type BatchRecord } from '../repositories/batch-record.js';
import { BatchRecords } from '../repositories/batch-records.port.js';
import { UsageLedger } from '../repositories/usage-ledger.port.js';
import { toJsonl, toResultLine } from './batch-output.mapper.js';
import type { BatchPlan } from './batch-plan.js';
import type { LeasedBatch } from './leased-batch.js';

/** At most this many lines go into one part of a batch's output or error file. */
export const LINES_PER_PART = 256;

/** A line of the input, by number, and the request it carries. */
export interface NamedLine {
  line: number;
  customId: string;
}

/** The writer sees a batch only as the replica that holds its lease (the one allowed to write). */
type Holder = Pick<LeasedBatch, 'holder'>;
/** Collecting also answers the lines folded into a finished one, from the batch's plan. */
type Collector = Holder & Partial<Pick<LeasedBatch, 'plan'>>;

const now = () => Math.floor(Date.now() / 1000);

/**
 * The results written for the lines folded into `result`'s line, each under its own custom_id and line:
 * the same reply, whose usage says that none of its prompt was evaluated (all of it cached), as is so.
 */
const REPEAT = Symbol('repeat');
type Answer = BatchLineResult & { [REPEAT]?: true };
const isRepeat = (r: Answer): boolean => r[REPEAT] === true;
function repeatsAnswered(batchId: string, result: BatchLineResult, plan: BatchPlan | null | undefined): Answer[] {
  return (plan?.repeatsOf(result.line) ?? []).map(({ line, customId }) => ({
    ...(result.ok ? { ...result, reply: { ...result.reply, usage: asCached(result.reply.usage) } } : result),
    line,
    customId,
    requestId: batchLineJobId(batchId, line),
    [REPEAT]: true as const,
  }));
}
const asCached = (usage: TokenUsage): TokenUsage => ({ ...usage, cachedTokens: usage.promptTokens });

const NO_TOKENS: CollectedResults['tokens'] = { prompt: 0, cached: 0, folded: 0 };
/** Prompt tokens of the lines that ran (and what of them was reused), and of the folded lines, never evaluated. */
function promptTokens(
  ran: readonly BatchLineResult[],
  repeats: readonly BatchLineResult[],
): CollectedResults['tokens'] {
  const sum = (rs: readonly BatchLineResult[], of: (u: TokenUsage) => number) =>
    rs.reduce((total, r) => total + (r.ok ? of(r.reply.usage) : 0), 0);
  return {
    prompt: sum(ran, (u) => u.promptTokens),
    cached: sum(ran, (u) => u.cachedTokens ?? 0),
    folded: sum(repeats, (u) => u.promptTokens),
  };
}

/**
 * Writes a batch's lines to its output and error files, and commits them as done, so that each
 * custom_id is written exactly once: results as workers hand them back, lines that never ran, lines
 * lost for good. It is also where a batch becomes completed.
 *
 * A line counts as done only once its output line is durably in the batch's files: lines are written as
 * a numbered part, then one step commits them (done, out of the window, counted) if this replica still
 * drives the batch. A replica that dies in between leaves them to be written again, to the same part,
 * by whoever takes over.
 */
@Injectable()
export class ResultWriter {
  constructor(
    @Inject(BATCH_ENDPOINTS) private readonly endpoints: BatchEndpoints,
    private readonly batches: BatchRecords,
    private readonly lines: BatchLines,
    private readonly store: FileStore,
    private readonly metrics: PlatformMetrics,
    private readonly usage: UsageLedger,
    private readonly quota: TokenQuota,
  ) {}

  /**
   * The tokens of a part's lines that ran, once it is committed (written once, by the replica that drives
   * its batch), under its batch's owner and endpoint: one ledger entry per deployment per part, named by
   * the part, rather than one per line, so what the ledger keeps to count each once grows with the parts
   * written (a 256th of the lines), not with the lines.
   */
  private count(batch: BatchRecord, part: number, ran: readonly BatchLineResult[]): void {
    const byModel = new Map<string, { usage: Required<TokenUsage>; lines: number; at: number }>();
    for (const r of ran) {
      if (!r.ok) continue;
      this.metrics.countPrompt(r.model, r.reply.usage);
      let sum = byModel.get(r.model);
      if (!sum)
        byModel.set(
          r.model,
          (sum = { usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0 }, lines: 0, at: 0 }),
        );
      sum.usage.promptTokens += r.reply.usage.promptTokens;
      sum.usage.completionTokens += r.reply.usage.completionTokens;
      sum.usage.cachedTokens += r.reply.usage.cachedTokens ?? 0;
      sum.lines++;
      sum.at = Math.max(sum.at, r.finishedAt ?? Date.now());
    }
    for (const [model, { usage, lines, at }] of byModel) {
      const entry = {
        requestId: `${batch.id}:output-${part}:${model}`,
        at,
        key: batch.owner,
        deployment: model,
        route: batch.endpoint,
        batch: true,
        usage,
        requests: lines,
      };
      void this.usage.count(entry).catch((err: Error) => {
        new Logger(ResultWriter.name).warn(`Could not count the usage of ${batch.id} part ${part}: ${err.message}`);
      });
    }
  }

  /** Repeats answered by their line's result: counted as lines and prompt tokens never evaluated. */
  private countFolded(repeats: readonly BatchLineResult[]): void {
    for (const r of repeats) {
      if (!r.ok) continue;
      this.metrics.batchPlan.linesFolded.inc({ deployment: r.model });
      this.metrics.batchPlan.foldedPromptTokens.inc({ deployment: r.model }, r.reply.usage.promptTokens);
    }
  }

  /** Settles ended lines against the owner's daily token quota: their share of the batch's reservation, for what they used. */
  private async settle(batch: BatchRecord, lines: number, ok: BatchLineResult[]): Promise<void> {
    if (batch.in_progress_at === null || !lines) return;
    const used = ok.reduce(
      (sum, r) => sum + (r.ok ? r.reply.usage.promptTokens + r.reply.usage.completionTokens : 0),
      0,
    );
    await this.quota.settleBatch(batch.owner, batch.id, batch.in_progress_at * 1000, { lines, used, ended: false });
  }

  /**
   * Writes finished lines to the output and error files; a line retried after a worker died is written
   * once. A line that others were folded into (the same request, asked again) answers them too: its
   * result is written under each of their custom_ids, and only its own tokens are counted.
   */
  async collect(batch: BatchRecord, lease: Collector): Promise<void> {
    const endpoint = this.endpoints[batch.endpoint];
    for (;;) {
      const results = await this.lines.pendingResults(batch.id, LINES_PER_PART);
      if (!results.length) return;
      const answered = results.flatMap((r) => [r, ...repeatsAnswered(batch.id, r, lease.plan)]);
      const done = await this.lines.doneAmong(batch.id, [...new Set(answered.map((r) => r.line))]);
      const fresh = new Map<number, BatchLineResult>();
      for (const result of answered)
        if (!done.has(result.line) && !fresh.has(result.line)) fresh.set(result.line, result);
      const ok = [...fresh.values()].filter((r) => r.ok);
      const failed = [...fresh.values()].filter((r) => !r.ok);
      const ran = ok.filter((r) => !isRepeat(r));
      const part = batch.output_parts;
      const committed = await this.persist(
        batch,
        lease,
        ok.map((r) => toResultLine(batch.id, r, endpoint)),
        failed.map((r) => toResultLine(batch.id, r, endpoint)),
        {
          written: [...fresh.keys()],
          lines: answered.map((r) => r.line),
          taken: results.length,
          completed: ok.length,
          failed: failed.length,
          tokens: promptTokens(ran, ok.filter(isRepeat)),
        },
      );
      if (committed) {
        this.count(batch, part, ran);
        this.countFolded(ok.filter(isRepeat));
        await this.settle(batch, fresh.size, ran);
      }
      if (!committed || results.length < LINES_PER_PART) return;
    }
  }

  /** Error lines for lines that never ran (those not already written), committed as done. */
  async writeNotRun(batch: BatchRecord, lease: Holder, lines: NamedLine[], code: NotRunCode): Promise<boolean> {
    const { batchResults } = this.endpoints[batch.endpoint];
    const done = await this.lines.doneAmong(
      batch.id,
      lines.map((l) => l.line),
    );
    const fresh = new Map(lines.filter((l) => !done.has(l.line)).map((l) => [l.line, l.customId]));
    return this.persist(
      batch,
      lease,
      [],
      [...fresh.values()].map((c) => batchResults.notRun(batch.id, c, code)),
      {
        written: [...fresh.keys()],
        lines: lines.map((l) => l.line),
        taken: 0,
        completed: 0,
        failed: 0,
        tokens: NO_TOKENS,
      },
    );
  }

  /** Error lines for lines lost for good (none of them written yet), committed as done and failed. */
  async writeLost(batch: BatchRecord, lease: Holder, lines: NamedLine[]): Promise<boolean> {
    const { batchResults } = this.endpoints[batch.endpoint];
    return this.persist(
      batch,
      lease,
      [],
      lines.map(({ customId }) => batchResults.lost(batch.id, customId)),
      {
        written: lines.map(({ line }) => line),
        lines: lines.map(({ line }) => line),
        taken: 0,
        completed: 0,
        failed: lines.length,
        tokens: NO_TOKENS,
      },
    );
  }

  /** Every custom_id is written: the one place a batch becomes completed, and ends. */
  async complete(batch: BatchRecord, ending: Pick<LeasedBatch, 'finish'>): Promise<void> {
    await this.batches.update(batch.id, { status: 'finalizing', finalizing_at: now() });
    await this.batches.end(batch.id, { status: 'completed', completed_at: now() });
    await ending.finish();
  }

  /**
   * Writes output lines (to the output file) and error lines (to the error file), each as the next part
   * of its file, then commits them with `commit` if this replica still drives the batch. A part written
   * and not committed is written again, with the same number, by the next attempt, so it never doubles.
   */
  private async persist(
    batch: BatchRecord,
    { holder }: Holder,
    output: BatchResultLine[],
    errors: BatchResultLine[],
    commit: Omit<CollectedResults, 'outputParts' | 'errorParts'>,
  ): Promise<boolean> {
    // Checked before writing too: a replica that lost the batch must not write over the parts of the one that has it.
    if (!(await this.lines.holdsLease(batch.id, holder))) return false;
    if (output.length) await this.store.writePart(batch.output_file_id as string, batch.output_parts, toJsonl(output));
    if (errors.length) await this.store.writePart(await this.errorFile(batch), batch.error_parts, toJsonl(errors));
    const parts = { outputParts: output.length ? 1 : 0, errorParts: errors.length ? 1 : 0 };
    if (!(await this.lines.commit(batch.id, holder, { ...commit, ...parts }))) return false;
    batch.output_parts += parts.outputParts;
    batch.error_parts += parts.errorParts;
    batch.completed += commit.completed;
    batch.failed += commit.failed;
    return true;
  }

  private async errorFile(batch: BatchRecord): Promise<string> {
    if (batch.error_file_id) return batch.error_file_id;
    const file = await this.store.create({
      filename: `${batch.id}_errors.jsonl`,
      purpose: outputPurpose(batch),
      owner: batch.owner,
    });
    batch.error_file_id = file.id;
    await this.batches.update(batch.id, { error_file_id: file.id });
    return file.id;
  }
}
