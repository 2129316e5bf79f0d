// The bodies of the streamed requests sent upstream: chat and legacy completions, in the dialect the
// upstream speaks.
import type { ChatTurn } from '@conveyor/queue';
import { withoutLarkKeyword } from '@conveyor/structured';
import type { GenerateRequest } from '../core/generation-engine.js';

/**
 * How an upstream is spoken to. `openai`: any OpenAI-compatible server; only what the request sets is
 * sent, so the upstream's own defaults apply to the rest. `llama-server`: llama.cpp's server run by the
 * worker; unset sampling fields get OpenAI's neutral values, as the in-process engine gives them (llama.cpp
 * would apply top_k 40, top_p 0.95 and min_p 0.05), and it reports each token's count and the prompt's size
 * as it goes (`timings_per_token`, `return_progress`).
 */
export type UpstreamDialect = 'openai' | 'llama-server';

type Body = Record<string, unknown>;

/** The data: URI each image of the request is sent as, by its hash. */
export type ImageUris = ReadonlyMap<string, string>;

/** The fields chat and legacy completion requests share: sampling, budget, stops, choices, streaming. */
function commonFields(request: GenerateRequest, model: string, dialect: UpstreamDialect): Body {
  const s = request.sampling;
  const neutral = dialect === 'llama-server';
  const body: Body = {
    model,
    stream: true,
    stream_options: { include_usage: true },
    temperature: s.temperature,
  };
  const set = (name: string, value: unknown, fallback?: unknown) => {
    const chosen = value ?? (neutral ? fallback : undefined);
    if (chosen !== undefined) body[name] = chosen;
  };
  set('top_p', s.topP, 1);
  // 0 turns top-k off in llama.cpp and vLLM alike.
  set('top_k', s.topK !== undefined && s.topK > 0 ? s.topK : undefined, 0);
  set('min_p', s.minP, 0);
  // llama.cpp calls it repeat_penalty, vLLM repetition_penalty: each ignores the other's name.
  set('repeat_penalty', s.repeatPenalty, 1);
  set('repetition_penalty', s.repeatPenalty);
  set('presence_penalty', s.presencePenalty);
  set('frequency_penalty', s.frequencyPenalty);
  set('seed', s.seed);
  if (s.ignoreEos) body.ignore_eos = true;
  set('min_tokens', s.minTokens);
  if (s.logitBias && Object.keys(s.logitBias).length) body.logit_bias = s.logitBias;
  if (request.stop.length) body.stop = request.stop;
  const sent = request.continueFrom?.tokens ?? 0;
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens - sent;
  if ((request.n ?? 1) !== 1) body.n = request.n;
  if (neutral) {
    body.timings_per_token = true;
    body.return_progress = true;
  }
  return body;
}

/** The body of a streamed `/chat/completions` request for a chat job. */
export function chatRequestBody(
  request: GenerateRequest,
  model: string,
  dialect: UpstreamDialect,
  images: ImageUris,
): Body {
  const body = commonFields(request, model, dialect);
  const messages: Body[] = request.messages.map((turn) => wireMessage(turn, images));
  const partial = request.continueFrom?.text;
  if (partial) {
    // The reply so far, as an assistant turn the model continues (llama.cpp's server does so for any
    // trailing assistant turn; vLLM when told to, with these two fields, which llama.cpp also reads).
    messages.push({ role: 'assistant', content: partial });
    body.continue_final_message = true;
    body.add_generation_prompt = false;
  }
  body.messages = messages;
  if (dialect === 'llama-server' && request.stop.length) {
    // llama.cpp's server says which stop string ended a reply only in its debugging field, `__verbose`,
    // which it adds to a chat stream's last chunk alone; `response_fields` keeps that field to the two it
    // is read for. Legacy completions are not asked: there it would come with every token.
    body.verbose = true;
    body.response_fields = ['stop_type', 'stopping_word'];
  }
  if (request.tools?.length) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description !== undefined ? { description: t.description } : {}),
        ...(t.parameters !== undefined ? { parameters: withoutLarkKeyword(t.parameters) } : {}),
      },
    }));
    const choice = request.toolChoice;
    if (choice !== undefined)
      body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
    // A named function is called once. llama.cpp's server makes one call unless told otherwise, where
    // OpenAI's default is as many as the model makes.
    const parallel =
      typeof choice === 'object' ? false : (request.parallelToolCalls ?? (dialect === 'llama-server' || undefined));
    if (parallel !== undefined) body.parallel_tool_calls = parallel;
  }
  const format = request.responseFormat;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema')
    body.response_format = { type: 'json_schema', json_schema: { name: format.name, schema: format.schema } };
  if (request.logprobs !== undefined) {
    body.logprobs = true;
    // llama.cpp's server reports no log-probabilities at all for 0 alternatives: ask for one, keep none.
    body.top_logprobs = dialect === 'llama-server' ? Math.max(1, request.logprobs) : request.logprobs;
  }
  return body;
}

/** The body of a streamed `/completions` request for a legacy completion job (raw prompts). */
export function completionRequestBody(request: GenerateRequest, model: string, dialect: UpstreamDialect): Body {
  const body = commonFields(request, model, dialect);
  const prompts = request.prompts ?? [];
  body.prompt = prompts.length === 1 ? prompts[0] : prompts;
  if (request.logprobs !== undefined)
    body.logprobs = dialect === 'llama-server' ? Math.max(1, request.logprobs) : request.logprobs;
  return body;
}

function wireMessage(turn: ChatTurn, images: ImageUris): Body {
  if (turn.role === 'tool') return { role: 'tool', tool_call_id: turn.toolCallId ?? '', content: turn.content };
  if (turn.role === 'assistant' && turn.toolCalls?.length) {
    return {
      role: 'assistant',
      content: turn.content || null,
      tool_calls: turn.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    };
  }
  if (!turn.parts) return { role: turn.role, content: turn.content };
  return {
    role: turn.role,
    content: turn.parts.map((part) =>
      part.type === 'text'
        ? { type: 'text', text: part.text }
        : { type: 'image_url', image_url: { url: images.get(part.image.sha256) ?? '' } },
    ),
  };
}
