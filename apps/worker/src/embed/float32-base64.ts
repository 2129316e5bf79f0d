/** A vector as the `embedding` reply event carries it: little-endian float32 bytes, base64-encoded. */
export function toBase64Float32(vector: Float32Array): string {
  const bytes = Buffer.alloc(vector.length * 4);
  // Written value by value so the byte order is little-endian whatever the host's.
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes.toString('base64');
}
