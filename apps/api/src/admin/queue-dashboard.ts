import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ErrorCode, type OpenAiErrorBody } from '@conveyor/openai';
import { isAdminKey, presentedAdminKey } from './admin-credentials.js';
import { QUEUE_DASHBOARD_PATH } from './queue-dashboard.path.js';

const unauthorized: OpenAiErrorBody = {
  error: {
    message:
      'The queue dashboard needs the admin key: HTTP Basic with the key as password, or "Authorization: Bearer <admin key>".',
    type: 'authentication_error',
    param: null,
    code: ErrorCode.invalidApiKey,
  },
};

/**
 * Bull Board over the deployments' queues, in a Fastify scope of its own whose
 * hook checks the admin key before any of the board's pages or API routes run.
 * `queues` is read again on each request: workers' own queues come and go with them.
 */
export async function mountQueueDashboard(
  fastify: FastifyInstance,
  queues: () => Promise<Queue[]>,
  adminKeySha256: string,
): Promise<void> {
  const board = new FastifyAdapter();
  board.setBasePath(QUEUE_DASHBOARD_PATH);
  const shown = createBullBoard({
    queues: (await queues().catch(() => [])).map((queue) => new BullMQAdapter(queue)),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'Conveyor queues' } },
  });
  const refresh = async () => {
    // Redis away: the board keeps the queues it showed last.
    const now = await queues().catch(() => null);
    if (now) shown.replaceQueues(now.map((queue) => new BullMQAdapter(queue)));
  };
  await fastify.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => {
      if (isAdminKey(presentedAdminKey(request.headers.authorization), adminKeySha256)) return refresh();
      await reply
        .code(401)
        .header('www-authenticate', 'Basic realm="Conveyor admin", charset="UTF-8"')
        .send(unauthorized);
    });
    await scope.register(board.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
  });
}

const disabled: OpenAiErrorBody = {
  error: {
    message: 'The queue dashboard is off: start the API with ADMIN_KEY (or ADMIN_KEY_SHA256) set to serve it here.',
    type: 'not_found_error',
    param: null,
    code: ErrorCode.dashboardDisabled,
  },
};

/** Without an admin key the dashboard is not served; its path says why instead of a bare 404. */
export async function mountDashboardHint(fastify: FastifyInstance): Promise<void> {
  await fastify.register(async (scope) => {
    const answer = async (_request: unknown, reply: FastifyReply) => reply.code(404).send(disabled);
    scope.get(QUEUE_DASHBOARD_PATH, answer);
    scope.get(`${QUEUE_DASHBOARD_PATH}/*`, answer);
  });
}
