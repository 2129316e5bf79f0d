/** Every item a stream yields, in order, once it ends; rethrows what the stream throws. */
export async function drain<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const seen: T[] = [];
  for await (const item of stream) seen.push(item);
  return seen;
}
