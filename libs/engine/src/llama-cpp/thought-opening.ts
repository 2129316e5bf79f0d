import { Template } from '@huggingface/jinja';
import { LlamaText, type ChatWrapper, type LlamaModel } from 'node-llama-cpp';

/**
 * The text with which a template's generation prompt opens a thought segment ("<think>\n" in
 * DeepSeek-R1 and Qwen3-style templates), or null. node-llama-cpp's Jinja wrapper leaves it out of
 * the prompts it renders, since its own chat loop writes it; generating here, the prompt must carry
 * it, as llama.cpp's server renders the template verbatim.
 */
export function templateThoughtOpening(model: LlamaModel, chatWrapper: ChatWrapper): string | null {
  const segment = chatWrapper.settings.segments?.thought?.prefix;
  const source = model.fileInfo.metadata.tokenizer?.chat_template;
  const prefix = typeof segment === 'string' ? segment : segment instanceof LlamaText ? segment.toString() : null;
  if (!prefix || typeof source !== 'string') return null;
  try {
    const text = new Template(source).render({
      messages: [{ role: 'user', content: 'x' }],
      add_generation_prompt: true,
      bos_token: '',
      eos_token: '',
    });
    const at = text.lastIndexOf(prefix);
    return at >= 0 && text.slice(at + prefix.length).trim() === '' ? text.slice(at) : null;
  } catch {
    // A template this renderer cannot run: prompts stay as node-llama-cpp renders them.
    return null;
  }
}
