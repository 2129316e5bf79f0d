import { request } from 'node:http';

/**
 * Announces a body of `declaredBytes` but sends only its first bytes, then
 * waits for the answer: a server that enforces a body limit answers from the
 * Content-Length alone. (fetch reports such an early answer as a failed write.)
 */
export function postOversized(url: string, declaredBytes: number): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': declaredBytes } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.write('{"model":"conveyor-tiny","messages":[{"role":"user","content":"');
  });
}
