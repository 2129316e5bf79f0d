/** Whether a Redis at `url` answers PING now; never retries, never throws. */
export function redisAnswers(url: string): Promise<boolean>;
