/** Reads a raw SSE response into its `data:` payloads, checking OpenAI's framing on the way. */
export async function readSse(res: Response): Promise<{ raw: string; payloads: string[] }> {
  const raw = await res.text();
  const blocks = raw.split('\n\n');
  // The body ends with a blank line after the last event.
  if (blocks.at(-1) !== '') throw new Error(`SSE body does not end with a blank line: ${JSON.stringify(raw.slice(-40))}`);
  const payloads = blocks.slice(0, -1).map((block) => {
    if (!block.startsWith('data: ') || block.includes('\n')) throw new Error(`Not a single data line: ${JSON.stringify(block)}`);
    return block.slice('data: '.length);
  });
  return { raw, payloads };
}
