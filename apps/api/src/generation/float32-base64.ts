/**
 * The floats of a vector as workers send it (little-endian float32, base64): an embedding's, or a rerank
 * score as a vector of one value.
 */
export function fromBase64Float32(vector: string): number[] {
  const bytes = Buffer.from(vector, 'base64');
  const values = new Array<number>(bytes.length >> 2);
  // Nine significant digits print every float32 exactly, in about half the characters of a double.
  for (let i = 0; i < values.length; i++) values[i] = Number(bytes.readFloatLE(i * 4).toPrecision(9));
  return values;
}
