import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export interface InputLine {
  /** 1-based line number in the file. */
  line: number;
  text: string;
}

/** The non-blank lines of a JSONL stream, read one at a time, numbered as an editor shows them. */
export async function* readInputLines(stream: Readable, fromLine = 0): AsyncGenerator<InputLine> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (line <= fromLine || !text.trim()) continue;
      yield { line, text };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
