/** Request fields a deployment fills in when a request leaves them unset; the request's own value wins. */
export interface SamplingPreset {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  repetition_penalty?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  max_tokens?: number;
}

/** What a request's checks and job mapping need to know of the deployment it names. */
export interface DeploymentTraits {
  id: string;
  /** `generate`: chat and text completions; `embeddings`: `/v1/embeddings` only. */
  task: 'generate' | 'embeddings' | 'rerank';
  /** Tokens of context per sequence, prompt and reply together. */
  contextSize: number;
  /** The most characters one token can stand for: a prompt longer than contextSize times this cannot fit. */
  promptCharsPerToken: number;
  /** Sequences one worker runs at once: the most choices one request may ask for. */
  parallel: number;
  /** Whether its model reads images (a vision projector): requests to any other refuse image parts. */
  vision: boolean;
  defaults: SamplingPreset;
}
