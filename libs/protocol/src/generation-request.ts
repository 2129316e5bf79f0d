import type { ServiceTier } from '@conveyor/openai';
import type { ChatTurn, OutputFormat, Sampling } from '@conveyor/queue';
import type { DeploymentTraits } from './deployment-traits.js';
import type { DecodedImage } from './image-data-uri.parser.js';
import type { DeclaredTools } from './tool-checks.js';

/** The images a check decoded, by the body's part that carried each (the key its turns look them up by). */
export type DecodedImages = ReadonlyMap<object, DecodedImage>;

/** An image part of a body, wherever its API puts it, and the fields a refusal names. */
export interface ImagePart {
  /** The body's part itself: the turns find its decoded image under it. */
  part: object;
  /** The part's place in the body (`messages[0].content[1]`); its `.type` is named when the deployment reads no images. */
  at: string;
  /** Its data: URI and the field holding it; a part referring to an uploaded file instead names that field. */
  source: { uri: string; at: string } | { fileAt: string };
}

/**
 * A generating request in neutral terms, whichever API's body it came from: what the one check
 * (`checkGenerationRequest`) weighs against the deployment and the one job (`toGenerationJob`) carries.
 * The fields a refusal names are the body's own (`max_output_tokens`, `input`), so each API's clients
 * are told of their own fields.
 */
export interface GenerationRequest {
  /** The conversation as the job's chat turns, its images referred to once decoded; empty for raw prompts. */
  turns(images: DecodedImages): ChatTurn[];
  /** Raw prompts, generated without a chat template (legacy completions), each its own sequence. */
  prompts?: string[];
  /** The tools as one list, with the choice among them and whether a reply may call several. */
  tools: DeclaredTools;
  /** The reply's format; none for plain text. */
  format?: OutputFormat;
  /** The field holding the format's JSON Schema (`response_format.json_schema.schema`). */
  formatAt?: string;
  sampling: Sampling;
  /** The reply's budget, the deployment's preset filled in where the body has none. */
  maxTokens?: number;
  /** The field setting the budget, named when it cannot fit the context. */
  maxTokensAt: string;
  /** The budget is the most the reply may take, cut to the room the prompt leaves (Anthropic's), not refused. */
  clampToContext?: boolean;
  stop: string[];
  /** Choices (per prompt, with raw prompts). */
  n?: number;
  /** Alternatives reported per token; unset for none. */
  logprobs?: number;
  /** The conversation's key, routing requests that share it to the worker holding its prompt. */
  cacheKey?: string;
  /** Characters of everything the prompt renders from the body (of the longest, with raw prompts). */
  promptChars: number;
  /** The field holding the prompt (`messages`, `input`, `prompt`), named when it cannot fit the context. */
  promptAt: string;
  /** The image parts, in the order the prompt renders them. */
  images: ImagePart[];
  /** The parts' type as the body names it (`image_url`, `input_image`), named when the deployment reads no images. */
  imageType: string;
  /** What the count of images is of: a request's own, or the conversation it continues too. */
  imagesIn: 'request' | 'conversation';
}

/** A body of a generating API: the rules only its API has, and itself as a neutral request. */
export interface GenerationBody {
  readonly model: string;
  /** Whether the reply is asked for as Server-Sent Events. */
  readonly stream?: boolean | null;
  /** The service tier the body asks for, in OpenAI's terms; none: its key's and deployment's say alone. */
  askedTier(): ServiceTier | null | undefined;
  /** What the server logs of the request's prompt, when LOG_PROMPTS is on. */
  loggedPrompt(): unknown;
  /** Refuses what only this API forbids (a field needing another, a reply to no call), naming the field. */
  checkSurface(): void;
  /** The body in neutral terms; fields it leaves unset take the deployment's preset. */
  toRequest(deployment: DeploymentTraits): GenerationRequest;
}
