/** Detokenizes `tokens`, given the tokens just before them (some tokenizers need them to place spaces). */
export type Detokenize<T> = (tokens: readonly T[], lastTokens: readonly T[]) => string;

/** The most tokens one character can span: a 4-byte UTF-8 character as single-byte tokens. */
const MAX_CHARACTER_TOKENS = 4;
/** Tokens of context handed to the detokenizer for the next piece. */
const CONTEXT_TOKENS = 8;
const REPLACEMENT = '\uFFFD';

/**
 * Turns generated tokens into text piece by piece. A token that ends inside a
 * multi-byte character decodes to U+FFFD; it is held until the character is
 * complete, so the streamed pieces join into exactly the text of all tokens.
 */
export class TokenText<T> {
  private pending: T[] = [];
  private recent: T[] = [];

  constructor(private readonly detokenize: Detokenize<T>) {}

  push(token: T): string {
    this.pending.push(token);
    const text = this.detokenize(this.pending, this.recent);
    if (text.endsWith(REPLACEMENT) && this.pending.length < MAX_CHARACTER_TOKENS) return '';
    return this.take(text);
  }

  /** Whatever is still held when the reply ends. */
  flush(): string {
    return this.pending.length ? this.take(this.detokenize(this.pending, this.recent)) : '';
  }

  private take(text: string): string {
    this.recent = this.recent.concat(this.pending).slice(-CONTEXT_TOKENS);
    this.pending = [];
    return text;
  }
}
