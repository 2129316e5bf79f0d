/**
 * Reads one JSON object from a byte stream and hands out the members of one of its arrays one at a
 * time, each parsed alone, so a body of hundreds of megabytes (a Message Batch of 100,000 requests) is
 * never held, parsed whole, as one string or one object graph: the reader keeps one member's bytes at a
 * time, and the object's other fields.
 *
 * The rest of the body is kept as a skeleton: every byte outside the array's members, each member
 * standing as `0`. Parsed at the end, the skeleton checks the body's syntax around the members (commas,
 * brackets, the other fields) exactly as JSON.parse would, and gives the other fields.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** UTF-8's byte-order mark. */
const BOM = Uint8Array.of(0xef, 0xbb, 0xbf);
/** What stands for a member in the skeleton. */
const MEMBER_MARK = Uint8Array.of(0x30);
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** A key longer than this is not the array's key, so no more of it is kept. */
const MAX_KEY_BYTES = 256;

/** Why a body cannot be read: its syntax, or more than the reader keeps of it. */
export class JsonBodyError extends Error {}

export interface JsonArrayReaderLimits {
  /** Bytes of the body outside the array's members (its other fields). */
  maxSkeletonBytes: number;
}

/** The body's fields besides the array; `present` says whether the array was there at all. */
export interface JsonArrayRest {
  fields: Record<string, unknown> | null;
  present: boolean;
}

/**
 * Yields each member of the top-level object's array `key`, parsed, in order; once the stream ends
 * `rest()` gives the other fields. Throws JsonBodyError at the first syntax problem it can see.
 */
export class JsonArrayReader {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The bytes of the string last closed at the object's top level, while it may still be a key. */
  private keyBytes: number[] = [];
  private keyOverflow = false;
  private lastKey: string | null = null;
  /** A string at depth 1 just closed: a `:` next makes it a key. */
  private stringJustClosed = false;
  private afterColon = false;
  /** Within the array: its depth, and the member being read (its parts) when inside one. */
  private arrayDepth = 0;
  private member: Buffer[] | null = null;
  private seenArray = false;
  /**
   * The skeleton's bytes, in an array of its own: small copies of each piece would come from Node's
   * shared buffer pool and each keep alive the 8 KB slab it shares with a member's bytes, which held
   * the whole body in memory after all.
   */
  private skeleton = new Uint8Array(1024);
  private skeletonBytes = 0;
  private parsedRest: JsonArrayRest | null = null;
  /** Bytes of a leading byte-order mark read so far; -1 once the body is past where one could be. */
  private bomMatched = 0;

  constructor(
    private readonly key: string,
    private readonly limits: JsonArrayReaderLimits,
  ) {}

  async *members(source: AsyncIterable<Buffer | string>): AsyncGenerator<unknown> {
    for await (const chunk of source) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      yield* this.scan(bytes);
    }
    if (this.member) throw new JsonBodyError(`The body ends inside ${this.key}.`);
    this.parsedRest = this.finish();
  }

  /** The body's other fields; only once `members()` has run to its end. */
  rest(): JsonArrayRest {
    if (!this.parsedRest) throw new Error('the body has not been read to its end');
    return this.parsedRest;
  }

  private *scan(bytes: Buffer): Generator<unknown> {
    /** Where the bytes not yet given to the skeleton or the member begin. */
    let from = 0;
    // A byte-order mark before the body, which Fastify's own parser lets through too (its bytes may
    // come in separate chunks).
    while (this.bomMatched >= 0 && from < bytes.length) {
      if (bytes[from] !== BOM[this.bomMatched]) {
        this.addSkeleton(BOM.subarray(0, this.bomMatched));
        this.bomMatched = -1;
        break;
      }
      from++;
      if (++this.bomMatched === BOM.length) this.bomMatched = -1;
    }
    for (let i = from; i < bytes.length; i++) {
      const c = bytes[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.depth === 1 && !this.afterColon) this.stringJustClosed = true;
          continue;
        }
        if (this.depth === 1 && !this.afterColon) this.keepKeyByte(c);
        continue;
      }
      if (isSpace(c)) continue;
      if (this.arrayDepth && this.depth === this.arrayDepth && (c === COMMA || c === CLOSE_BRACKET)) {
        // A member ends here (or the array was empty, or ended with a trailing comma: the skeleton's
        // parse refuses both).
        if (this.member) {
          this.member.push(bytes.subarray(from, i));
          yield parseMember(Buffer.concat(this.member), this.key);
          this.member = null;
          this.addSkeleton(MEMBER_MARK);
          from = i;
        }
        if (c === CLOSE_BRACKET) this.arrayDepth = 0;
      } else if (this.arrayDepth && this.depth === this.arrayDepth && !this.member) {
        // A member begins: what came before it goes to the skeleton.
        this.addSkeleton(bytes.subarray(from, i));
        from = i;
        this.member = [];
      }
      const wasKey = this.stringJustClosed;
      this.stringJustClosed = false;
      if (c === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && !this.afterColon) this.startKey();
      } else if (c === COLON && this.depth === 1 && wasKey) {
        this.lastKey = this.decodeKey();
        this.afterColon = true;
        continue;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (c === OPEN_BRACKET && this.depth === 1 && this.afterColon && this.lastKey === this.key) {
          if (this.seenArray) throw new JsonBodyError(`The body has ${this.key} more than once.`);
          this.seenArray = true;
          this.arrayDepth = 2;
        }
        this.depth++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.depth--;
        if (this.depth < 0) throw new JsonBodyError('The body is not valid JSON: a bracket closes nothing.');
      }
      if (this.depth === 1 && c === COMMA) this.afterColon = false;
    }
    if (this.member) this.member.push(bytes.subarray(from));
    else this.addSkeleton(bytes.subarray(from));
  }

  private startKey(): void {
    this.keyBytes = [];
    this.keyOverflow = false;
  }

  private keepKeyByte(c: number): void {
    if (this.keyBytes.length < MAX_KEY_BYTES) this.keyBytes.push(c);
    else this.keyOverflow = true;
  }

  /** The key as JSON.parse reads it (escapes too), or null for one too long to be the array's. */
  private decodeKey(): string | null {
    if (this.keyOverflow) return null;
    try {
      return JSON.parse(`"${Buffer.from(this.keyBytes).toString('utf8')}"`) as string;
    } catch {
      throw new JsonBodyError('The body is not valid JSON: a key is not a valid string.');
    }
  }

  private addSkeleton(bytes: Uint8Array): void {
    if (!bytes.length) return;
    const size = this.skeletonBytes + bytes.length;
    if (size > this.limits.maxSkeletonBytes) {
      throw new JsonBodyError(
        `The body's fields besides ${this.key} take more than ${this.limits.maxSkeletonBytes} bytes.`,
      );
    }
    if (size > this.skeleton.length) {
      const grown = new Uint8Array(Math.max(size, this.skeleton.length * 2));
      grown.set(this.skeleton.subarray(0, this.skeletonBytes));
      this.skeleton = grown;
    }
    this.skeleton.set(bytes, this.skeletonBytes);
    this.skeletonBytes = size;
  }

  private finish(): JsonArrayRest {
    const text = Buffer.from(this.skeleton.buffer, 0, this.skeletonBytes).toString('utf8');
    if (!text.trim()) return { fields: null, present: false };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text, refusePoisoning);
    } catch (err) {
      if (err instanceof JsonBodyError) throw err;
      throw new JsonBodyError(`The body is not valid JSON: ${(err as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { fields: null, present: false };
    const fields = parsed as Record<string, unknown>;
    return { fields, present: this.seenArray };
  }
}

function parseMember(bytes: Buffer, key: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'), refusePoisoning);
  } catch (err) {
    if (err instanceof JsonBodyError) throw err;
    throw new JsonBodyError(`The body is not valid JSON: a member of ${key}: ${(err as Error).message}`);
  }
  return parsed;
}

/**
 * Refuses `__proto__` and `constructor.prototype` keys, as every other body's parser does (Fastify's,
 * set to refuse them): an object carrying one poisons whatever merges it into another.
 */
function refusePoisoning(this: unknown, key: string, value: unknown): unknown {
  if (
    key === '__proto__' ||
    (key === 'constructor' && value !== null && typeof value === 'object' && 'prototype' in value)
  ) {
    throw new JsonBodyError('The body has a __proto__ or constructor.prototype key, which is refused.');
  }
  return value;
}
