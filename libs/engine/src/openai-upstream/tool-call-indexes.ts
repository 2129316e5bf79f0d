import { randomBytes } from 'node:crypto';
import type { ToolCallDelta } from '@conveyor/queue';

/** A tool call piece as an upstream streams it: `index` may be missing, and so may the id of a new call. */
export type UpstreamCallDelta = Omit<ToolCallDelta, 'index'> & { index?: number };

/**
 * Numbers one choice's tool calls 0, 1, … in the order they start, whatever the upstream sends: OpenAI
 * and llama.cpp's server number them, but some servers leave `index` out, or give every call index 0 and
 * its own id. A piece starts a new call when its index is new, or when it carries an id other than its
 * call's. Each call's first piece carries its id (one is made up where the upstream sent none); later
 * pieces only what they add.
 */
export class ToolCallIndexes {
  /** Our index of each upstream index. */
  private readonly byUpstream = new Map<number, number>();
  private readonly ids: string[] = [];
  private last = -1;

  next(piece: UpstreamCallDelta): ToolCallDelta {
    const known = piece.index === undefined ? this.last : (this.byUpstream.get(piece.index) ?? -1);
    const sameCall = known >= 0 && (piece.id === undefined || piece.id === this.ids[known]);
    const index = sameCall ? known : this.ids.length;
    if (!sameCall) this.ids.push(piece.id ?? `call_${randomBytes(12).toString('hex')}`);
    if (piece.index !== undefined) this.byUpstream.set(piece.index, index);
    this.last = index;
    const delta: ToolCallDelta = { index, arguments: piece.arguments };
    if (!sameCall) delta.id = this.ids[index];
    if (piece.name !== undefined) delta.name = piece.name;
    return delta;
  }
}
