/**
 * The lines where a committed generated file and what the code generates now part, at most a few:
 * enough to see what changed without the whole file.
 */
export function differingLines(committed: string, generated: string): string[] {
  const [a, b] = [committed.split('\n'), generated.split('\n')];
  const lines: string[] = [];
  for (let i = 0; i < Math.max(a.length, b.length) && lines.length < 5; i++) {
    if (a[i] !== b[i])
      lines.push(`line ${i + 1}: committed ${JSON.stringify(a[i])}, generated ${JSON.stringify(b[i])}`);
  }
  return lines;
}
