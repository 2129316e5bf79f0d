import { HttpClient } from './http.mjs';
import { freePort } from './processes.mjs';

/** @import { Children } from './processes.mjs' */

/**
 * Starts llama.cpp's server on loopback as the benches run it beside Conveyor: CPU only, `threads` for
 * generation and batches, `sequences` slots sharing a context of `contextSize` tokens each (llama-server's
 * -c is the whole context; Conveyor's CONTEXT_SIZE is per sequence), the model's own chat template.
 * `extra` adds flags before the fixed ones. Resolves once it listens.
 * @param {Children} children
 * @param {{ binary: string, modelPath: string, threads: number, sequences: number, contextSize: number, extra?: string[] }} options
 * @returns {Promise<{ client: HttpClient, base: string, args: string[], readyMs: number }>} `args`: the flags
 *   that set it up (model, host and port left out), for the report
 */
export async function startLlamaServer(children, { binary, modelPath, threads, sequences, contextSize, extra = [] }) {
  // llama-server closes a connection after a streamed reply, so a kept-alive socket fails on reuse.
  const client = new HttpClient({ keepAlive: false });
  const port = await freePort();
  const args = [
    ...['-t', String(threads), '-tb', String(threads), '-np', String(sequences)],
    ...['-c', String(contextSize * sequences), ...extra, '-ngl', '0', '--jinja', '--no-webui'],
  ];
  const where = ['-m', modelPath, '--host', '127.0.0.1', '--port', String(port)];
  const server = await children.launch('llama-server', binary, [...where, ...args], {}, /listening on http/, 60_000);
  console.log(`  llama-server ${args.join(' ')}: ready in ${(server.readyMs / 1000).toFixed(1)} s`);
  return { client, base: `http://127.0.0.1:${port}`, args, readyMs: server.readyMs };
}
