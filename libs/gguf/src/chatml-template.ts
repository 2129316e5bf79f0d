/**
 * The system turn a request with tools opens with, as Qwen 2.5 writes it: the request's own system
 * message first, then the tools as JSON and how to call them, one `<tool_call>` block per call.
 */
const TOOLS_SYSTEM_TURN =
  "{%- if tools %}{{- '<|im_start|>system\\n' }}" +
  "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] + '\\n\\n' }}{%- endif %}" +
  '{{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}' +
  '{%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}' +
  '{{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments ' +
  'within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": ' +
  '<args-json-object>}\\n</tool_call><|im_end|>\\n" }}{%- endif %}';

/** An assistant turn that called tools: its text, then one `<tool_call>` block per call. */
const CALLS_TURN =
  "{{- '<|im_start|>assistant' }}{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}" +
  '{%- for tool_call in message.tool_calls %}' +
  '{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}' +
  '{{- \'\\n<tool_call>\\n{"name": "\' + tool_call.name + \'", "arguments": \' }}' +
  '{%- if tool_call.arguments is string %}{{- tool_call.arguments }}{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}' +
  "{{- '}\\n</tool_call>' }}{%- endfor %}{{- '<|im_end|>\\n' }}";

/** Consecutive tool results share one user turn, each in its `<tool_response>` block. */
const RESULTS_TURN =
  "{%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}" +
  "{{- '\\n<tool_response>\\n' + message['content'] + '\\n</tool_response>' }}" +
  "{%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}";

const PLAIN_TURN = "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}";

/**
 * ChatML as Qwen-style models ship it, with their tool calling: several `<tool_call>` blocks per reply.
 * Rendered by the engine from the GGUF, not by us. Without tools a conversation renders exactly as
 * plain ChatML, so prompts (and token counts) of requests without tools do not depend on tool support.
 */
function chatTemplate(generationPrompt: string): string {
  return (
    TOOLS_SYSTEM_TURN +
    '{%- for message in messages %}' +
    "{%- if message['role'] == 'system' and tools and loop.first %}" +
    "{%- elif message['role'] == 'assistant' and message.tool_calls %}" +
    CALLS_TURN +
    "{%- elif message['role'] == 'tool' %}" +
    RESULTS_TURN +
    '{%- else %}' +
    PLAIN_TURN +
    '{%- endif %}{%- endfor %}' +
    `{%- if add_generation_prompt %}{{- '${generationPrompt}' }}{%- endif %}`
  );
}

export const CHATML_TEMPLATE = chatTemplate('<|im_start|>assistant\\n');

/** ChatML as thinking models ship it: each reply opens with a thought segment. */
export const CHATML_THINK_TEMPLATE = chatTemplate('<|im_start|>assistant\\n<think>\\n');

export const THINK_TOKENS = ['<think>', '</think>'] as const;
