import type { DeploymentConfig } from '@conveyor/config';
import { isEmbedJob, isGenerationJob, type ChatTurn, type ImageRef, type QueuedJobData } from '@conveyor/queue';

/**
 * UTF-8 bytes per token of an estimate. The API loads no tokenizer, so a prompt's tokens are guessed from
 * its length: about four bytes a token is OpenAI's rule of thumb for English with its BPE tokenizers, and
 * llama-family vocabularies are close. Code and other scripts run more tokens per byte; what the guess
 * misses is charged when the reply settles, with the worker's real count.
 */
export const BYTES_PER_TOKEN = 4;
/** Tokens a chat template adds around each turn (role markers, separators), a few for most templates. */
const TURN_TOKENS = 4;
/**
 * Pixels one image token covers where the deployment sets no image budget: a 28×28 square, what one
 * token stands for in Qwen2-VL-style projectors (14-pixel patches merged two by two).
 */
const PIXELS_PER_IMAGE_TOKEN = 28 * 28;

const tokensOfText = (text: string): number => Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN);

/** An image's tokens: the deployment's budget per image when it sets one, else one a 28×28 square. */
function tokensOfImage(image: ImageRef, deployment: DeploymentConfig): number {
  const { engine } = deployment;
  if (engine.kind === 'llama-server' && engine.imageMaxTokens !== null) return engine.imageMaxTokens;
  return Math.ceil((image.width * image.height) / PIXELS_PER_IMAGE_TOKEN);
}

function tokensOfTurn(turn: ChatTurn, deployment: DeploymentConfig): number {
  let tokens = TURN_TOKENS + tokensOfText(turn.content);
  for (const call of turn.toolCalls ?? []) tokens += tokensOfText(call.name) + tokensOfText(call.arguments);
  for (const part of turn.parts ?? []) if (part.type === 'image') tokens += tokensOfImage(part.image, deployment);
  return tokens;
}

/**
 * The tokens a job may use, input and output, before any worker has counted them: what its key's token
 * quota reserves. The prompt's tokens are estimated from its text (and its images' budgets); the output
 * is its max_tokens for every choice, or, with none, the context the prompt leaves.
 */
export function estimateTokens(job: QueuedJobData, deployment: DeploymentConfig): number {
  if (isEmbedJob(job)) {
    return job.inputs.reduce((sum, input) => sum + (typeof input === 'string' ? tokensOfText(input) : input.length), 0);
  }
  if (!isGenerationJob(job)) return 0;
  const tools = job.tools?.length ? tokensOfText(JSON.stringify(job.tools)) : 0;
  const prompts = job.prompts?.length
    ? job.prompts.map(tokensOfText)
    : [job.messages.reduce((sum, turn) => sum + tokensOfTurn(turn, deployment), tools)];
  const choices = job.n ?? 1;
  return prompts.reduce((sum, prompt) => {
    const output = job.maxTokens ?? Math.max(0, deployment.contextSize - prompt);
    return sum + prompt + choices * output;
  }, 0);
}
