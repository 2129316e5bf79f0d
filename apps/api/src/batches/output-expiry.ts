import { Injectable } from '@nestjs/common';
import type { BatchRecord } from '../repositories/batch-record.js';
import { FileExpiries } from '../repositories/file-expiries.port.js';

/**
 * A batch's `output_expires_after`, applied as the batch ends: its output and error files expire that long
 * after its end. OpenAI makes those files as a batch finalizes, so their `created_at` anchor is the end;
 * here they are opened as the batch starts (results are readable while it runs), so the end is counted
 * from instead. Set again by whoever ends the batch after a replica died, the first expiry stands.
 */
@Injectable()
export class OutputExpiry {
  constructor(private readonly expiries: FileExpiries) {}

  async apply(batch: BatchRecord): Promise<void> {
    const endedAt = batch.completed_at ?? batch.failed_at ?? batch.expired_at ?? batch.cancelled_at;
    if (!batch.output_ttl_s || endedAt === null) return;
    const files = [batch.output_file_id, batch.error_file_id].filter((id): id is string => id !== null);
    await this.expiries.expire(files, endedAt + batch.output_ttl_s);
  }
}
