/**
 * Reads a raw SSE response into its `data:` payloads, checking OpenAI's framing on the way:
 * every event is one `data:` line, optionally preceded by its `id:` line, and ends with a blank line.
 */
export async function readSse(res: Response): Promise<{ raw: string; payloads: string[]; ids: Array<number | null> }> {
  const raw = await res.text();
  const blocks = raw.split('\n\n');
  if (blocks.at(-1) !== '')
    throw new Error(`SSE body does not end with a blank line: ${JSON.stringify(raw.slice(-40))}`);
  const ids: Array<number | null> = [];
  const payloads = blocks.slice(0, -1).map((block) => {
    const lines = block.split('\n');
    const id = lines.length === 2 && /^id: \d+$/.test(lines[0]) ? Number(lines[0].slice(4)) : null;
    const data = id === null ? lines : lines.slice(1);
    if (data.length !== 1 || !data[0].startsWith('data: '))
      throw new Error(`Not a single data line: ${JSON.stringify(block)}`);
    ids.push(id);
    return data[0].slice('data: '.length);
  });
  return { raw, payloads, ids };
}
