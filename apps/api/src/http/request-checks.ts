import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hostName, type AllowedHosts, type PlatformConfig } from '@conveyor/config';
import { ErrorCode } from '@conveyor/openai';
import { dialectOf } from '../dialects/speaks.decorator.js';
import { OpenAiHttpError } from '../errors/openai-http.error.js';
import { answerAndClose } from './raw-error.js';
import { installStreamedBodies, streamsBody } from './streamed-body.js';

/**
 * Routes any Host may reach. Load balancers and kubelets probe the pod's address, not a name, and
 * these two tell nothing beyond up or ready. `/metrics` is not among them: it names every deployment
 * and its traffic, so a scraper addresses the API by an allowed name (the Kubernetes manifest allows
 * the pod's own IP).
 */
export const ANY_HOST_ROUTES: ReadonlySet<string> = new Set(['/health', '/ready']);

/** The one route that takes multipart bodies (and large ones: its own deadline). */
const isUpload = (request: FastifyRequest): boolean =>
  request.method === 'POST' && request.routeOptions.url === '/v1/files';

/** Whether a `Host` header names a host the API answers to. */
export function hostAllowed(header: string | undefined, allowed: AllowedHosts): boolean {
  if (allowed === '*') return true;
  const name = header === undefined ? null : hostName(header);
  return name !== null && allowed.includes(name);
}

/** How many Host headers a request carries (Node's `headers.host` shows only the first). */
export function hostHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'host') count++;
  return count;
}

/**
 * The authority of an absolute-form request target (`GET http://name/path`), which names the host in
 * place of the Host header (RFC 9112, 3.2.2); undefined for the usual origin form (`GET /path`).
 */
export function targetHost(target: string | undefined): string | undefined {
  const absolute = target === undefined ? null : /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(target);
  return absolute ? absolute[1]!.replace(/^.*@/, '') : undefined;
}

/** A refusal in the shape of the dialect the request's route speaks (the route is known before any hook runs). */
const refuse = (reply: FastifyReply, status: number, message: string, code: ErrorCode): void => {
  const shaped = dialectOf(reply.request).error(OpenAiHttpError.refusal(status, message, code));
  void reply.code(shaped.status).headers(shaped.headers).send(shaped.body);
};

/**
 * Refuses a request and closes its connection once the answer is out (Node ends the socket after a
 * response that says `Connection: close`). A client refused for its Host has no business on this
 * server: kept alive, its socket stayed open for the keep-alive time, and one whose body was still to
 * come held it with no deadline, as the body deadline is set only for requests that pass these checks.
 */
const refuseAndClose = (reply: FastifyReply, status: number, message: string, code: ErrorCode): void => {
  void reply.header('connection', 'close');
  refuse(reply, status, message, code);
};

/** At most this much of a header is repeated back in an error message. */
const ECHO_CHARS = 100;

/**
 * Checks every request before its route runs, in Fastify's first hook, before its body is read:
 *
 * - its `Host` must be an allowed name, so a page on a hostile site cannot reach a local server
 *   through DNS rebinding (its requests carry the hostile site's name);
 * - multipart bodies go to the upload route only (a cross-site form can send one without a CORS
 *   preflight);
 * - the body must arrive within REQUEST_BODY_TIMEOUT_MS (UPLOAD_TIMEOUT_MS for an upload, or for a
 *   route that reads a large body as a stream), so a client that stops sending mid-body does not hold
 *   its socket open forever.
 */
export function installRequestChecks(fastify: FastifyInstance, api: PlatformConfig['api']): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    // Node keeps the first of several Host headers: a proxy may have read another. RFC 9112 refuses them.
    if (hostHeaderCount(request.raw.rawHeaders) > 1) {
      return refuseAndClose(reply, 400, 'A request must carry one Host header.', ErrorCode.malformedRequest);
    }
    const host = targetHost(request.raw.url) ?? request.headers.host;
    // Node's own check for this answered outside any API's shape; it is off, and done here instead.
    if (host === undefined && request.raw.httpVersion === '1.1') {
      return refuseAndClose(reply, 400, 'An HTTP/1.1 request must carry a Host header.', ErrorCode.malformedRequest);
    }
    if (!ANY_HOST_ROUTES.has(request.routeOptions.url ?? '') && !hostAllowed(host, api.allowedHosts)) {
      return refuseAndClose(
        reply,
        403,
        `This server does not answer to the host ${JSON.stringify((host ?? '').slice(0, ECHO_CHARS))}; ` +
          'the names it answers to are set by ALLOWED_HOSTS.',
        ErrorCode.hostNotAllowed,
      );
    }
    const type = request.headers['content-type'];
    if (type && /^\s*multipart\//i.test(type) && !isUpload(request) && request.headers['content-length'] !== '0') {
      return refuse(
        reply,
        415,
        'Multipart bodies are for file uploads (POST /v1/files) only; send this request as application/json.',
        ErrorCode.unsupportedMediaType,
      );
    }
    const large = isUpload(request) || streamsBody(request);
    watchBodyDeadline(request, reply, large ? api.uploadTimeoutMs : api.bodyTimeoutMs);
    done();
  });
  installBodyParsers(fastify);
  installStreamedBodies(fastify);
}

/**
 * Closes the connection with a 408 when the request's body has not fully arrived `limitMs` after its
 * headers. Node's own request timer covers the whole server with one limit, too short for uploads or
 * too long for everything else; this one is per route, and Node's stays as a backstop.
 */
function watchBodyDeadline(request: FastifyRequest, reply: FastifyReply, limitMs: number): void {
  const raw = request.raw;
  if (raw.complete) return;
  const timer = setTimeout(() => {
    if (raw.complete) return;
    // A response already under way (the route refused early) is cut off rather than followed by a second one.
    if (reply.raw.headersSent) raw.socket.destroy();
    else
      answerAndClose(
        raw.socket,
        dialectOf(request).error(
          OpenAiHttpError.refusal(
            408,
            `The request body did not arrive within ${limitMs} ms; the connection is closed.`,
            ErrorCode.requestTimeout,
          ),
        ),
      );
  }, limitMs);
  timer.unref();
  raw.once('end', () => clearTimeout(timer));
  // A route that answers before reading the body (a refused upload) leaves Node reading the rest:
  // the deadline holds for that too, so the timer stays until the body is in.
  reply.raw.once('close', () => {
    if (raw.complete) clearTimeout(timer);
  });
}

/** The refusal of a body that is not JSON. */
export const unsupportedMediaType = (type: string): OpenAiHttpError =>
  new OpenAiHttpError(
    415,
    'invalid_request_error',
    `Unsupported Content-Type ${JSON.stringify(type.slice(0, ECHO_CHARS))}; send the body as application/json.`,
    null,
    ErrorCode.unsupportedMediaType,
  );

/**
 * JSON bodies only. A missing Content-Type is read as JSON (the hosted forms' own calls omit it);
 * `application/json` with any charset is JSON; anything else with a body is a 415. Browsers send
 * `text/plain`, form-encoded and multipart bodies across sites without a CORS preflight, so
 * accepting JSON under those types let any web page drive a local server.
 *
 * An empty body is no body, whatever its type: the Python openai client sends
 * `content-type: application/json` and nothing else on bodyless POSTs and DELETEs (cancel a batch,
 * delete a file). A route that needs a body refuses a missing one. Prototype poisoning is refused.
 */
function installBodyParsers(fastify: FastifyInstance): void {
  const json = fastify.getDefaultJsonParser('error', 'error');
  const jsonOrNothing: typeof json = (request, body, done) =>
    body.length === 0 ? done(null, undefined) : json(request, body, done);
  fastify.removeContentTypeParser(['application/json', 'text/plain']);
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, jsonOrNothing);
  const anythingElse: typeof json = (request, body, done) => {
    const type = request.headers['content-type'];
    if (body.length === 0 || type === undefined) return jsonOrNothing(request, body, done);
    done(unsupportedMediaType(type), undefined);
  };
  fastify.addContentTypeParser('*', { parseAs: 'string' }, anythingElse);
}
