import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export interface InputLine {
  /** 1-based line number in the file. */
  line: number;
  text: string;
}

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
