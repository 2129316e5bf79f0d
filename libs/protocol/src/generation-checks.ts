import { ErrorCode } from '@conveyor/openai';
import type { DeploymentTraits } from './deployment-traits.js';
import { RequestProblem } from './request-problem.js';

/**
 * Refuses a prompt of more characters than the deployment's context could hold at its bound of
 * characters per token: it could never fit, and tokenizing it would cost the worker for nothing.
 */
export function checkPromptLength(
  deployment: DeploymentTraits,
  chars: number,
  param: string,
  noun: 'prompt' | 'input' = 'prompt',
): void {
  const most = deployment.contextSize * deployment.promptCharsPerToken;
  if (chars <= most) return;
  throw new RequestProblem(
    `The ${noun} is ${chars} characters; the model's context of ${deployment.contextSize} tokens holds at most ${most}.`,
    param,
    ErrorCode.contextLengthExceeded,
  );
}

/** The deployment generates text (not embeddings or reranking only): what a body that tokenizes or generates needs. */
export function checkGenerates(deployment: DeploymentTraits): void {
  if (deployment.task !== 'generate') {
    const only =
      deployment.task === 'embeddings' ? 'embeddings only (POST /v1/embeddings)' : 'reranking only (POST /v1/rerank)';
    throw new RequestProblem(`The model '${deployment.id}' serves ${only}.`, 'model', ErrorCode.modelNotSupported);
  }
}
