export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

/** Whether a rendered prompt leaves the model inside a thought segment (templates that open `<think>` for it). */
export function promptOpensThought(promptText: string): boolean {
  const open = promptText.lastIndexOf(THINK_OPEN);
  return open >= 0 && promptText.indexOf(THINK_CLOSE, open) < 0;
}

/**
 * Splits streamed reply text into the thought segment and the answer. The
 * segment runs from `<think>` (or from the start, when the prompt opened it) to
 * `</think>`; tags split across pieces are held back until they are complete.
 * A reply that never closes its thought is all reasoning, as vLLM's parsers treat it.
 */
export class ReasoningSplitter {
  private state: 'before' | 'inside' | 'after';
  private held = '';
  /** Whitespace right after `</think>` separates the parts and belongs to neither. */
  private trimLead = false;

  constructor(startsInside: boolean) {
    this.state = startsInside ? 'inside' : 'before';
  }

  push(text: string): { reasoning: string; content: string } {
    const out = { reasoning: '', content: '' };
    let rest = this.held + text;
    this.held = '';
    while (rest) {
      if (this.state === 'after') {
        if (this.trimLead) rest = rest.replace(/^\s+/, '');
        if (rest) this.trimLead = false;
        out.content += rest;
        break;
      }
      if (this.state === 'before') {
        // Only a reply that opens with the tag (after whitespace) has a thought segment.
        const lead = rest.trimStart();
        if (lead.startsWith(THINK_OPEN)) {
          rest = lead.slice(THINK_OPEN.length);
          this.state = 'inside';
          continue;
        }
        if (THINK_OPEN.startsWith(lead)) {
          this.held = rest;
          break;
        }
        this.state = 'after';
        continue;
      }
      const close = rest.indexOf(THINK_CLOSE);
      if (close >= 0) {
        out.reasoning += rest.slice(0, close);
        rest = rest.slice(close + THINK_CLOSE.length);
        this.state = 'after';
        this.trimLead = true;
        continue;
      }
      const keep = partialSuffix(rest, THINK_CLOSE);
      out.reasoning += rest.slice(0, rest.length - keep);
      this.held = rest.slice(rest.length - keep);
      break;
    }
    return out;
  }

  /** What is held when the reply ends: it was no tag after all. */
  flush(): { reasoning: string; content: string } {
    const held = this.held;
    this.held = '';
    return this.state === 'inside' ? { reasoning: held, content: '' } : { reasoning: '', content: held };
  }
}

function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--)
    if (tag.startsWith(text.slice(text.length - n))) return n;
  return 0;
}
