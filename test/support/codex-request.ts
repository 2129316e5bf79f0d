import { APPLY_PATCH_GRAMMAR } from './apply-patch-grammar.js';

/** `apply_patch`'s grammar, as Codex sends it. */
export const PATCH_GRAMMAR = APPLY_PATCH_GRAMMAR;

/**
 * A Responses request body shaped as Codex CLI (0.171) sends one with its default features: its system
 * prompt as developer messages, `store: false` with the encrypted reasoning included, a prompt cache
 * key and client metadata, and a tools list mixing functions, a namespace, a free-form `apply_patch`
 * and the hosted web search. Texts and schemas are shortened (`apply_patch`'s grammar aside); the shape
 * is the captured one.
 */
export function codexRequest(model: string, session = 'a9b0c1d2-0000-4000-8000-00000000c0de'): Record<string, unknown> {
  return {
    model,
    instructions: 'You are a coding assistant working in a terminal.',
    input: [
      {
        type: 'message',
        role: 'developer',
        content: [
          {
            type: 'input_text',
            text: '<permissions instructions>sandbox_mode is read-only</permissions instructions>',
          },
        ],
      },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: '<environment_context>\n  <cwd>/tmp/work</cwd>\n</environment_context>' },
        ],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'say hi' }] },
    ],
    tools: [
      {
        type: 'function',
        name: 'exec_command',
        description: 'Runs a command in a PTY, returning output or a session ID for ongoing interaction.',
        strict: false,
        parameters: {
          type: 'object',
          properties: {
            cmd: { type: 'string', description: 'Shell command to execute.' },
            workdir: { type: 'string', description: 'Working directory for the command.' },
            yield_time_ms: { type: 'number', description: 'Wait before yielding output.' },
          },
          required: ['cmd'],
          additionalProperties: false,
        },
      },
      {
        type: 'function',
        name: 'view_image',
        description: 'View a local image file from the filesystem.',
        strict: false,
        parameters: {
          type: 'object',
          properties: { path: { type: 'string', description: 'Local filesystem path to an image file.' } },
          required: ['path'],
          additionalProperties: false,
        },
      },
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Tools for spawning and managing sub-tasks.',
        tools: [
          {
            type: 'function',
            name: 'close_agent',
            description: 'Close a sub-task when it is no longer needed.',
            strict: false,
            parameters: {
              type: 'object',
              properties: { target: { type: 'string', description: 'Id to close.' } },
              required: ['target'],
              additionalProperties: false,
            },
          },
          {
            type: 'function',
            name: 'wait_agent',
            description: 'Wait for a sub-task to finish.',
            strict: false,
            parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
          },
        ],
      },
      {
        type: 'custom',
        name: 'apply_patch',
        description:
          'Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
        format: { type: 'grammar', syntax: 'lark', definition: PATCH_GRAMMAR },
      },
      { type: 'web_search', external_web_access: false },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { summary: 'auto' },
    store: false,
    stream: false,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: session,
    client_metadata: {
      'x-codex-installation-id': 'b7f0c1d2-0000-4000-8000-000000000001',
      session_id: session,
      turn_id: 'b7f0c1d2-0000-4000-8000-000000000002',
    },
  };
}
