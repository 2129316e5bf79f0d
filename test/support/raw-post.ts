import { request } from 'node:http';

/**
 * POSTs a body and resolves with the response even if the server answers and
 * closes before the upload finishes (as it does for a body over the limit),
 * which fetch reports as a failed write instead.
 */
export function rawPost(url: string, body: Buffer | string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    req.end(body);
  });
}
