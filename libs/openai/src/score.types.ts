/**
 * `POST /v1/score`: vLLM's score API for cross-encoders. One score per pair, in the order of `text_2`.
 */
export interface ScoreResponse {
  id: string;
  object: 'list';
  created: number;
  model: string;
  data: ScoreData[];
  usage: ScoreUsage;
}

export interface ScoreData {
  /** The pair's position: its `text_2` item. */
  index: number;
  object: 'score';
  /** The model's probability that the pair's second text answers its first, 0 to 1. */
  score: number;
}

export interface ScoreUsage {
  prompt_tokens: number;
  total_tokens: number;
}
