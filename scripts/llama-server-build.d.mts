/** The cache folder of llama-server builds from the bundled llama.cpp source (its hash names it). */
export function llamaServerCacheDir(): string;
/** Path of a built llama-server; builds it first when the cache has none. */
export function ensureLlamaServer(options?: { log?: (line: string) => void }): string;
