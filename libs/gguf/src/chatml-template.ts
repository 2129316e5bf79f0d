/** The ChatML template Qwen-style models ship; rendered by the engine from the GGUF, not by us. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** ChatML as thinking models ship it: each reply opens with a thought segment. */
export const CHATML_THINK_TEMPLATE = CHATML_TEMPLATE.replace(
  "'<|im_start|>assistant\\n'",
  "'<|im_start|>assistant\\n<think>\\n'",
);

export const THINK_TOKENS = ['<think>', '</think>'] as const;
