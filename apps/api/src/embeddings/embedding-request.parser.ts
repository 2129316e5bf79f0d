import type { DeploymentConfig } from '@conveyor/config';
import type { EmbedJobData } from '@conveyor/queue';
import { EmbeddingRequestDto, embeddingInputs, validateDto } from '@conveyor/validation';
import { OpenAiHttpError } from '../errors/openai-http.error.js';

/** Validates an embeddings body; unknown fields are ignored, as the chat route ignores them. */
export function parseEmbeddingBody(body: unknown): EmbeddingRequestDto {
  const result = validateDto(EmbeddingRequestDto, body);
  if (!result.ok) throw OpenAiHttpError.invalidRequest(result.problem.message, result.problem.param);
  return result.value;
}

/** Refuses a deployment that generates text: its workers hold a chat context, not an embedding one. */
export function assertServesEmbeddings(deployment: DeploymentConfig): void {
  if (deployment.task !== 'embeddings') {
    throw OpenAiHttpError.invalidRequest(`The model '${deployment.id}' does not serve embeddings.`, 'model', 'model_not_supported');
  }
}

export function toEmbedJob(dto: EmbeddingRequestDto, requestId: string, deployment: string, now = Date.now()): EmbedJobData {
  return { requestId, deployment, inputs: embeddingInputs(dto), enqueuedAt: now };
}
