/**
 * The order a batch's lines are fed in, decided once the whole input is read (as llm-d's batch gateway
 * sorts lines by their system prompt, and SGLang serves a shared prefix together): lines that begin
 * alike go out together, a group at a time, so a worker computes each shared beginning once and its
 * sequences copy it, instead of lines of six instructions arriving mixed and pushing each other's
 * beginnings out of the cells. Lines that are one request asked again are folded into the first of
 * them: it runs once, and its result is written under every custom_id.
 *
 * The plan is a permutation of the input's lines read in passes: step s is every line of one group, in
 * file order, and the input is read once per step. A line's place in that order (its position, from 1)
 * is what the feeder's cursor counts, so a replica that takes a batch over reads on where the last one
 * stopped. Small groups are packed into one last step, so the passes stay few however the lines vary.
 */

import type { PlanSummary } from '../repositories/batch-record.js';
import { DigestTable } from './digest-table.js';

/** A line answered by another line's result: the same request, asked again. */
export interface RepeatLine {
  line: number;
  customId: string;
}

/** One pass over the input: the lines of one group (or of the small groups packed together). */
export interface PlanStep {
  /** The group's prefix key; `packed` for the step of small groups. */
  key: string;
  /** Lines it feeds (repeats folded into a line of it not counted). */
  lines: number;
}

/** Groups smaller than this share little: they are packed into the last step, in file order. */
const MIN_GROUP_LINES = 4;
/** At most this many passes over the input: the largest groups get their own, the rest are packed. */
const MAX_STEPS = 64;
/** Distinct beginnings tracked; past this, new ones count as small (a batch of all-different prompts). */
const MAX_TRACKED_GROUPS = 10_000; // a group index is kept in 16 bits per line
/** A line that no step feeds: invalid, or folded into another. */
const NOT_FED = 0xffff;
const PACKED = 'packed';

export class BatchPlan {
  private readonly starts: number[];

  constructor(
    readonly steps: readonly PlanStep[],
    /** Line number → its step, NOT_FED for lines no step feeds. */
    private readonly lineStep: Uint16Array,
    private readonly repeats: ReadonlyMap<number, readonly RepeatLine[]>,
    readonly groups: number,
  ) {
    let sum = 0;
    this.starts = steps.map((s) => ((sum += s.lines), sum - s.lines));
  }

  /** The step that feeds `line`, or null when none does (it is invalid, or folded into another line). */
  stepOf(line: number): number | null {
    const step = line < this.lineStep.length ? this.lineStep[line] : NOT_FED;
    return step === NOT_FED ? null : step;
  }

  /** The lines answered by `line`'s result, besides itself. */
  repeatsOf(line: number): readonly RepeatLine[] {
    return this.repeats.get(line) ?? [];
  }

  /** Lines the steps feed, all passes together. */
  get planned(): number {
    return this.steps.reduce((sum, s) => sum + s.lines, 0);
  }

  /** Lines folded into another. */
  get folded(): number {
    let n = 0;
    for (const r of this.repeats.values()) n += r.length;
    return n;
  }

  /** The position of the first line of `step`, less one: positions of step s run from startOf(s) + 1. */
  startOf(step: number): number {
    return step < this.starts.length ? this.starts[step] : this.planned;
  }

  /** The step holding the line after position `position`, and how many of that step's lines come before it. */
  locate(position: number): { step: number; skip: number } {
    let step = 0;
    while (step < this.steps.length && position >= this.starts[step] + this.steps[step].lines) step++;
    return { step, skip: step < this.steps.length ? position - this.starts[step] : 0 };
  }

  summary(): PlanSummary {
    return { groups: this.groups, steps: this.steps.length, folded: this.folded };
  }

  /** The plan as text, for the file store. */
  serialize(): string {
    const repeats: Array<[number, number, string]> = [];
    for (const [leader, lines] of this.repeats) for (const r of lines) repeats.push([leader, r.line, r.customId]);
    const lineStep = Buffer.from(this.lineStep.buffer, this.lineStep.byteOffset, this.lineStep.byteLength);
    return JSON.stringify({
      v: 1,
      groups: this.groups,
      steps: this.steps,
      lineStep: lineStep.toString('base64'),
      repeats,
    });
  }

  static parse(text: string): BatchPlan {
    const raw = JSON.parse(text) as {
      v: number;
      groups: number;
      steps: PlanStep[];
      lineStep: string;
      repeats: Array<[number, number, string]>;
    };
    if (raw.v !== 1) throw new Error(`unknown batch plan version ${raw.v}`);
    const bytes = Buffer.from(raw.lineStep, 'base64');
    // Copied into an aligned buffer: a Buffer from base64 may start at any byte of Node's pool.
    const lineStep = new Uint16Array(bytes.byteLength / 2);
    new Uint8Array(lineStep.buffer).set(bytes);
    const repeats = new Map<number, RepeatLine[]>();
    for (const [leader, line, customId] of raw.repeats) {
      let list = repeats.get(leader);
      if (!list) repeats.set(leader, (list = []));
      list.push({ line, customId });
    }
    return new BatchPlan(raw.steps, lineStep, repeats, raw.groups);
  }
}

/**
 * Builds a plan from the input's valid lines, as validation reads them (in file order): each line's
 * prefix key, and its repeat key where it may be folded (null: it always runs).
 */
export class PlanBuilder {
  private readonly groups = new Map<string, { index: number; lines: number }>();
  /** Group index per line (by line number), -1 for lines no step feeds, -2 for untracked groups' lines. */
  private lineGroup = new Int16Array(1024).fill(-1);
  private lines = 0;
  /** The first line of each repeatable request, by its repeat key. */
  private readonly leaders = new DigestTable();
  private readonly repeats = new Map<number, RepeatLine[]>();
  private untracked = 0;

  constructor(private readonly foldRepeats: boolean) {}

  /** Adds a valid line; false when it is folded into an earlier one (it will not be fed). */
  add(line: number, customId: string, prefix: string, repeat: string | null): boolean {
    this.reach(line);
    const leader = this.foldRepeats && repeat !== null ? this.leaders.setIfAbsent(repeat, line) : undefined;
    if (leader !== undefined) {
      let list = this.repeats.get(leader);
      if (!list) this.repeats.set(leader, (list = []));
      list.push({ line, customId });
      return false;
    }
    let group = this.groups.get(prefix);
    if (!group && this.groups.size < MAX_TRACKED_GROUPS)
      this.groups.set(prefix, (group = { index: this.groups.size, lines: 0 }));
    if (!group) {
      this.untracked++;
      this.lineGroup[line] = -2;
      return true;
    }
    group.lines++;
    this.lineGroup[line] = group.index;
    return true;
  }

  build(): BatchPlan {
    // The largest groups get steps of their own, in the order they first appear; the rest share the last.
    const large = [...this.groups.entries()]
      .filter(([, g]) => g.lines >= MIN_GROUP_LINES)
      .sort(([, a], [, b]) => b.lines - a.lines || a.index - b.index)
      .slice(0, MAX_STEPS - 1)
      .sort(([, a], [, b]) => a.index - b.index);
    const stepOfGroup = new Map<number, number>(large.map(([, g], step) => [g.index, step]));
    const steps: PlanStep[] = large.map(([key, g]) => ({ key, lines: g.lines }));
    const packed = { key: PACKED, lines: 0 };
    const lineStep = new Uint16Array(this.lines).fill(NOT_FED);
    this.lineGroup.subarray(0, this.lines).forEach((group, line) => {
      if (group === -1) return;
      const own = stepOfGroup.get(group);
      if (own !== undefined) lineStep[line] = own;
      else {
        lineStep[line] = steps.length;
        packed.lines++;
      }
    });
    if (packed.lines) steps.push(packed);
    return new BatchPlan(steps, lineStep, this.repeats, this.groups.size + this.untracked);
  }

  /** Makes room for `line`'s group, doubling the array as lines come (typed: 2 bytes a line, not 8). */
  private reach(line: number): void {
    this.lines = Math.max(this.lines, line + 1);
    if (line < this.lineGroup.length) return;
    let size = this.lineGroup.length;
    while (size <= line) size *= 2;
    const grown = new Int16Array(size).fill(-1);
    grown.set(this.lineGroup);
    this.lineGroup = grown;
  }
}
