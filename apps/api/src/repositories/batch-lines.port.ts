import type { BatchLineResult } from '@conveyor/queue';

/** A line handed to the queue and not yet written to the batch's files. */
export interface InflightLine {
  customId: string;
  deployment: string;
  /** The hashes of the images its job refers to, to release when the line is taken back unrun. */
  images?: string[];
}

/** What one collection wrote, to commit in one step. */
export interface CollectedResults {
  /** Lines newly written (each once). */
  written: number[];
  /** Lines of every result taken, written or already done before. */
  lines: number[];
  /** How many results were taken from the head of the list. */
  taken: number;
  completed: number;
  failed: number;
  /** Parts written to the output and error files (0 or 1 each). */
  outputParts: number;
  errorParts: number;
  /** Prompt tokens of the lines that ran, of those the reused, and of the folded lines (never evaluated). */
  tokens: { prompt: number; cached: number; folded: number };
}

/**
 * The per-line state of running batches: the window of lines in flight, the results workers hand back,
 * the custom_ids already written, and which API replica drives the batch (its lease).
 */
export abstract class BatchLines {
  /** Takes or renews the batch's lease for `holder`; false while another replica holds it. */
  abstract holdLease(batchId: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` holds it, so another replica drives the batch at once. */
  abstract releaseLease(batchId: string, holder: string): Promise<void>;
  /** Whether `holder` drives the batch right now. */
  abstract holdsLease(batchId: string, holder: string): Promise<boolean>;
  abstract addInflight(batchId: string, line: number, entry: InflightLine): Promise<void>;
  abstract inflightCount(batchId: string): Promise<number>;
  /** Every line in flight, by line number. */
  abstract inflight(batchId: string): Promise<Map<number, InflightLine>>;
  abstract removeInflight(batchId: string, line: number): Promise<void>;
  /** A finished line's result, as a worker hands it to the batch. */
  abstract pushResult(batchId: string, result: BatchLineResult): Promise<void>;
  /** The oldest `count` results not yet written. */
  abstract pendingResults(batchId: string, count: number): Promise<BatchLineResult[]>;
  abstract pendingResultCount(batchId: string): Promise<number>;
  /** Which of `lines` are already written. */
  abstract doneAmong(batchId: string, lines: readonly number[]): Promise<Set<number>>;
  /**
   * Commits results already written to the batch's files, if `holder` still drives the batch: their
   * lines become done, and leave the window, the results leave the list, the counters and
   * the next part numbers move on. All or nothing; false (nothing changed) when another replica drives it.
   */
  abstract commit(batchId: string, holder: string, collected: CollectedResults): Promise<boolean>;
  /** Removes every per-line key of a batch that has ended: only its record and files remain. */
  abstract clear(batchId: string): Promise<void>;
}
