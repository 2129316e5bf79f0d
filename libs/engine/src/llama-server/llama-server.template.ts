// The chat template llama-server renders prompts with, read from the server and rendered here to see
// whether it opens a thought for each reply.
import { Template } from '@huggingface/jinja';
import { jsonOrText, readText, UpstreamHttp } from '../openai-upstream/upstream-http.js';
import type { LlamaServerProcess } from './llama-server.process.js';

/** A template's generation prompt for one user turn, to see whether it opens a thought; empty when it cannot be rendered. */
export function renderGenerationPrompt(template: string): string {
  try {
    return new Template(template).render({
      messages: [{ role: 'user', content: 'x' }],
      add_generation_prompt: true,
      bos_token: '',
      eos_token: '',
    });
  } catch {
    return '';
  }
}

/** The chat template the server renders prompts with (its /props). */
export async function chatTemplate(server: LlamaServerProcess): Promise<string> {
  const http = new UpstreamHttp(new URL(`http://127.0.0.1:${server.port}/`), {
    keepAlive: false,
    idleTimeoutMs: 10_000,
  });
  try {
    const answer = await http.get('/props', undefined, { authorization: `Bearer ${server.apiKey}` });
    const props = jsonOrText(await readText(answer.body));
    const template =
      typeof props === 'object' && props !== null ? (props as { chat_template?: unknown }).chat_template : '';
    return typeof template === 'string' ? template : '';
  } finally {
    http.close();
  }
}
