import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { FileNotFoundError, FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { BATCH_ENDPOINTS, type BatchEndpoint, type BatchEndpoints } from '../contracts/batch-endpoint.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { parseBatchLine, validCustomId, type LineCheck } from './batch-line.parser.js';
import type { BatchPlan } from './batch-plan.js';

export interface InputLine {
  /** 1-based line number in the file. */
  line: number;
  text: string;
}

/** A line of a batch's input, checked against the batch's endpoint and the deployments. */
export type InputRequest = LineCheck & { line: number };

/** A line as the batch's plan feeds it: `position` is its place in the plan's order, from 1. */
export type PlannedRequest = InputRequest & { position: number };

/** Since when a batch's input cannot be read (for another reason than not existing); kept between reads. */
export interface InputWatch {
  unreadableSince: number | null;
}

/** The batch's input file cannot be read: it was deleted, or lives in a file store this replica does not share. */
export class InputUnreadable extends Error {}

/** How long the input may stay unreadable for another reason than not existing before the batch fails. */
const UNREADABLE_FOR_MS = 60_000;

/** U+FEFF at the very start of a file: Windows editors and Excel write it in front of UTF-8 text. */
const BYTE_ORDER_MARK = '\uFEFF';

/** The non-blank lines of a JSONL stream, read one at a time, numbered as an editor shows them. */
export async function* readInputLines(stream: Readable, fromLine = 0): AsyncGenerator<InputLine> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const read of lines) {
      line++;
      // A byte-order mark is no part of the first request: left in, it made line 1 invalid JSON.
      const text = line === 1 && read.startsWith(BYTE_ORDER_MARK) ? read.slice(BYTE_ORDER_MARK.length) : read;
      if (line <= fromLine || !text.trim()) continue;
      yield { line, text };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

/**
 * A batch's input as requests: the one place where the input file is read and its lines parsed, for
 * validating, feeding and recovering lines alike. Each line is checked as the batch's endpoint checks
 * a body, against the deployments this replica serves.
 */
@Injectable()
export class BatchInput {
  constructor(
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly store: FileStore,
    @Inject(BATCH_ENDPOINTS) private readonly endpoints: BatchEndpoints,
    private readonly registry: DeploymentRegistry,
  ) {}

  /**
   * The input's requests after line `fromLine`. A file this replica cannot find (deleted, or in a store it
   * does not share) throws InputUnreadable at once; other read failures throw as they are, and
   * InputUnreadable once the input has stayed unreadable for a minute since `watch` last read it.
   */
  async open(batch: BatchRecord, watch: InputWatch, fromLine = 0): Promise<AsyncGenerator<InputRequest>> {
    return this.requests(batch, readInputLines(await this.stream(batch, watch), fromLine));
  }

  /**
   * Each line's custom_id after line `fromLine`, in file order, skipping lines without a valid one: all that ending a batch's
   * lines needs of them, read without checking their requests (checking is most of a line's cost).
   */
  async *customIds(
    batch: BatchRecord,
    watch: InputWatch,
    fromLine = 0,
  ): AsyncGenerator<{ line: number; customId: string }> {
    for await (const { line, text } of readInputLines(await this.stream(batch, watch), fromLine)) {
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        continue;
      }
      const customId = validCustomId(raw);
      if (customId !== undefined) yield { line, customId };
    }
  }

  /**
   * The input's requests in the order `plan` feeds them, after position `from`: one pass over the file
   * per step of the plan, each yielding that step's lines. Without a plan (a batch made before plans), in
   * file order, where a line's position is its number.
   */
  async openPlanned(
    batch: BatchRecord,
    watch: InputWatch,
    plan: BatchPlan | null,
    from: number,
  ): Promise<AsyncGenerator<PlannedRequest>> {
    if (!plan) return withPositions(await this.open(batch, watch, from));
    // The first pass is opened now, so a file that cannot be read fails here as it does unplanned.
    const first = await this.stream(batch, watch);
    return this.planned(batch, watch, plan, from, first);
  }

  private async *planned(
    batch: BatchRecord,
    watch: InputWatch,
    plan: BatchPlan,
    from: number,
    first: Readable,
  ): AsyncGenerator<PlannedRequest> {
    const endpoint = this.endpoints[batch.endpoint];
    let { step, skip } = plan.locate(from);
    let stream: Readable | null = first;
    try {
      for (; step < plan.steps.length; step++, skip = 0) {
        let seen = 0;
        const start = plan.startOf(step);
        // Lines of other steps are skipped unparsed: a pass costs a read of the file, not a parse of it.
        for await (const { line, text } of readInputLines(stream ?? (await this.stream(batch, watch)))) {
          if (plan.stepOf(line) !== step || ++seen <= skip) continue;
          yield { ...this.parse(batch, endpoint, text, line), line, position: start + seen };
        }
        stream = null;
      }
    } finally {
      stream?.destroy();
    }
  }

  /** The input file's bytes, watched for a file that stays unreadable. */
  private stream(batch: BatchRecord, watch: InputWatch): Promise<Readable> {
    return this.read(batch.input_file_id, 'input', watch);
  }

  /**
   * The bytes of a file the batch runs from (its input, its plan): a file missing from this store throws
   * InputUnreadable at once, other failures as they are until the file has stayed unreadable for a minute.
   */
  async read(fileId: string, what: 'input' | 'plan', watch: InputWatch): Promise<Readable> {
    let stream: Readable;
    try {
      stream = await this.store.read(fileId);
      watch.unreadableSince = null;
    } catch (err) {
      const message = `The ${what} file ${fileId} cannot be read`;
      if (err instanceof FileNotFoundError) {
        throw new InputUnreadable(`${message}: it does not exist in this file store.`);
      }
      watch.unreadableSince ??= Date.now();
      if (Date.now() - watch.unreadableSince >= UNREADABLE_FOR_MS) {
        throw new InputUnreadable(`${message}: ${(err as Error).message}`);
      }
      throw err;
    }
    return stream;
  }

  private async *requests(batch: BatchRecord, lines: AsyncGenerator<InputLine>): AsyncGenerator<InputRequest> {
    const endpoint = this.endpoints[batch.endpoint];
    for await (const { line, text } of lines) yield { ...this.parse(batch, endpoint, text, line), line };
  }

  private parse(batch: BatchRecord, endpoint: BatchEndpoint, text: string, line: number): LineCheck {
    return parseBatchLine(text, line, batch.endpoint, endpoint, this.findDeployment, this.config.api.images);
  }

  private readonly findDeployment = (model: string): DeploymentConfig | undefined => this.registry.find(model);
}

/** Requests in file order, each at the position of its line. */
async function* withPositions(requests: AsyncGenerator<InputRequest>): AsyncGenerator<PlannedRequest> {
  try {
    for await (const request of requests) yield { ...request, position: request.line };
  } finally {
    await requests.return(undefined);
  }
}
