import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { FileNotFoundError, FileStore } from '@conveyor/batch-store';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { BATCH_ENDPOINTS, type BatchEndpoints } from '../generation/batch-endpoint.js';
import { DeploymentRegistry } from '../deployments/deployment-registry.service.js';
import type { BatchRecord } from '../repositories/batch-record.js';
import { parseBatchLine, type LineCheck } from './batch-line.parser.js';

export interface InputLine {
  /** 1-based line number in the file. */
  line: number;
  text: string;
}

/** A line of a batch's input, checked against the batch's endpoint and the deployments. */
export type InputRequest = LineCheck & { line: number };

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
    let stream: Readable;
    try {
      stream = await this.store.read(batch.input_file_id);
      watch.unreadableSince = null;
    } catch (err) {
      const message = `The input file ${batch.input_file_id} cannot be read`;
      if (err instanceof FileNotFoundError) {
        throw new InputUnreadable(`${message}: it does not exist in this file store.`);
      }
      watch.unreadableSince ??= Date.now();
      if (Date.now() - watch.unreadableSince >= UNREADABLE_FOR_MS) {
        throw new InputUnreadable(`${message}: ${(err as Error).message}`);
      }
      throw err;
    }
    return this.requests(batch, readInputLines(stream, fromLine));
  }

  private async *requests(batch: BatchRecord, lines: AsyncGenerator<InputLine>): AsyncGenerator<InputRequest> {
    const endpoint = this.endpoints[batch.endpoint];
    for await (const { line, text } of lines) {
      yield {
        ...parseBatchLine(text, line, batch.endpoint, endpoint, this.findDeployment, this.config.api.images),
        line,
      };
    }
  }

  private readonly findDeployment = (model: string): DeploymentConfig | undefined => this.registry.find(model);
}
