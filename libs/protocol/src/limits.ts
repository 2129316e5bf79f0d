/** The largest `max_tokens` any body accepts; a deployment's context bounds it further. */
export const MAX_TOKENS_LIMIT = 1 << 20;
