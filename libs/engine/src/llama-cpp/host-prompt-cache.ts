import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Token } from 'node-llama-cpp';
import type { EngineLogger } from '../core/engine-factory.js';
import { HostCacheIndex, type HostEntry, type HostMatch } from './host-cache-index.js';
import type { NativeContext } from './native-context.js';
import type { PromptCacheMode } from './prompt-reuse.js';

/** What the host cache did, for metrics and for the router (which announces what the entries hold). */
export type HostCacheEvent =
  | { kind: 'saved'; sequence: number; entry: number; bytes: number }
  | { kind: 'restored'; sequence: number; entry: number; tokens: number }
  /** `evicted`: past the budget; `superseded`: a new entry begins with its tokens; `failed`: unreadable. */
  | { kind: 'dropped'; entry: number; reason: 'evicted' | 'superseded' | 'failed' }
  | { kind: 'failed'; action: 'save' | 'restore'; error: Error };

/**
 * tmpfs where the machine has one: files there are pages of host memory, as llama-server's `--cache-ram`
 * holds its states in memory. node-llama-cpp 3.22 can take a sequence's whole state out of the context
 * only into a file (its in-memory checkpoints hold only the sliding-window part of an iSWA model's cache),
 * so a file on tmpfs is the memory variant. Elsewhere, the system's temporary folder.
 */
export function stateFolderRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/** Each engine's folder: `conveyor-prompt-cache-<pid>-<random>`, so a later process can tell whose it was. */
export const STATE_FOLDER_PREFIX = 'conveyor-prompt-cache-';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the folders of processes that are gone: a worker killed outright (SIGKILL, the OOM killer) never
 * removes its own, and on tmpfs they would hold memory until the machine restarts. A process of another
 * PID namespace sharing this tmpfs would look gone too; its states would then fail to read back, which it
 * counts and survives by computing the prompt.
 */
function removeOrphans(root: string): void {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(new RegExp(`^${STATE_FOLDER_PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    try {
      rmSync(join(root, name), { recursive: true, force: true });
    } catch {
      // Another user's, or removed meanwhile by another engine's start: not this one's to insist on.
    }
  }
}

/** Folders of engines still loaded, removed when the process exits however it exits short of a kill. */
const liveFolders = new Set<string>();
let exitHook = false;
function removeAtExit(folder: string): void {
  liveFolders.add(folder);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => liveFolders.forEach((f) => rmSync(f, { recursive: true, force: true })));
}

/**
 * Prefixes pushed out of the context's sequences, kept in host memory within a byte budget, and put back
 * into a sequence when a later prompt begins with one. Every call runs under the context's lock (the
 * slots hold it), so no decode runs while a state is written or read.
 */
export class HostPromptCache {
  private readonly index: HostCacheIndex;
  private readonly folder: string;
  private readonly listeners: Array<(event: HostCacheEvent) => void> = [];
  private nextId = 1;

  constructor(
    private readonly native: NativeContext,
    budget: number,
    /** The most tokens a sequence holds: a state is never read into a sequence with less room. */
    private readonly contextSize: number,
    private readonly log?: EngineLogger,
  ) {
    this.index = new HostCacheIndex(budget);
    const root = stateFolderRoot();
    removeOrphans(root);
    this.folder = mkdtempSync(join(root, `${STATE_FOLDER_PREFIX}${process.pid}-`));
    removeAtExit(this.folder);
  }

  get budget(): number {
    return this.index.budget;
  }

  /** Bytes of saved states held now. */
  get bytes(): number {
    return this.index.bytes;
  }

  get entries(): number {
    return this.index.size;
  }

  onEvent(listener: (event: HostCacheEvent) => void): void {
    this.listeners.push(listener);
  }

  /** See HostCacheIndex.worthSaving. */
  worthSaving(cells: readonly Token[], kept: number): boolean {
    return this.index.worthSaving(cells, kept);
  }

  /** Whether a chosen entry is still held: a save since may have evicted it. */
  has(entry: HostEntry): boolean {
    return this.index.has(entry);
  }

  /** See HostCacheIndex.best. */
  best(prompt: readonly Token[], mode: PromptCacheMode, atLeast: number): HostMatch | null {
    return this.index.best(prompt, mode, atLeast);
  }

  /**
   * Saves a sequence's cells (holding `tokens`, `prefilled` of them computed as a prompt) before they are
   * cut, evicting none of `spare` (entries about to be read back). A failure is reported, never thrown: the
   * request that cuts them goes on without the entry.
   */
  async save(sequence: number, tokens: readonly Token[], prefilled: number, spare: ReadonlySet<number>): Promise<void> {
    const id = this.nextId++;
    const file = this.file(id);
    let bytes: number;
    try {
      bytes = await this.native.saveSequenceStateToFile(file, sequence, Uint32Array.from(tokens));
    } catch (err) {
      await rm(file, { force: true });
      return this.fail('save', err);
    }
    const { kept, superseded, evicted } = this.index.add({ id, tokens: [...tokens], prefilled, bytes }, spare);
    if (!kept) return rm(file, { force: true });
    this.emit({ kind: 'saved', sequence, entry: id, bytes });
    for (const entry of superseded) await this.drop(entry, 'superseded');
    for (const entry of evicted) await this.drop(entry, 'evicted');
  }

  /**
   * Puts an entry's state into a sequence (replacing its cells), then drops the cells past the `upTo` tokens the prompt reuses. False
   * when it could not: the sequence's cells are then emptied, so nothing half read is ever reused.
   */
  async restore(match: HostMatch, sequence: number): Promise<boolean> {
    const { entry, upTo } = match;
    try {
      const tokens = await this.native.loadSequenceStateFromFile(this.file(entry.id), sequence, this.contextSize);
      if (tokens.length !== entry.tokens.length)
        throw new Error(`the state held ${tokens.length} tokens, ${entry.tokens.length} were saved`);
      this.native.removeTokenCellsFromSequence(sequence, upTo, -1);
      this.index.touch(entry);
      this.emit({ kind: 'restored', sequence, entry: entry.id, tokens: upTo });
      return true;
    } catch (err) {
      this.native.removeTokenCellsFromSequence(sequence, 0, -1);
      await this.drop(this.index.remove(entry), 'failed');
      this.fail('restore', err);
      return false;
    }
  }

  /** Deletes every state and the folder: the engine is going. */
  async dispose(): Promise<void> {
    this.index.clear();
    liveFolders.delete(this.folder);
    await rm(this.folder, { recursive: true, force: true });
  }

  private file(id: number): string {
    return join(this.folder, `${id}.state`);
  }

  private async drop(entry: HostEntry, reason: 'evicted' | 'superseded' | 'failed'): Promise<void> {
    await rm(this.file(entry.id), { force: true });
    this.emit({ kind: 'dropped', entry: entry.id, reason });
  }

  private fail(action: 'save' | 'restore', err: unknown): void {
    const error = err instanceof Error ? err : new Error(String(err));
    this.log?.warn(`The prompt cache in host memory could not ${action} a prefix: ${error.message}`);
    this.emit({ kind: 'failed', action, error });
  }

  private emit(event: HostCacheEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
