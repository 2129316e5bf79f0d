import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, type AIMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import {
  Agent,
  run,
  setTracingDisabled,
  tool as agentTool,
  OpenAIProvider,
  type AgentOutputItem,
} from '@openai/agents';
import { Output, generateText, stepCountIs, tool, type LanguageModel } from 'ai';
import { z } from 'zod';
import { TestPlatform } from './support/platform.js';

/**
 * The agent SDKs clients build on, at the versions package.json pins, against the platform: each makes
 * a tool round trip (a forced call, its result sent back, a final answer) and a structured reply. The
 * model's weights are random, so its words are gibberish; a forced call and grammar-constrained JSON
 * are well-formed all the same, and that is what is asserted.
 */
const MODEL = 'conveyor-tiny';
const KEY = 'unused';
const ASK = 'What is the weather in Paris?';
const ANSWER = 'Sunny, 21 degrees.';

/** The tool every SDK declares; its string is short so that the forced call fits in a few tokens. */
const weatherInput = z.object({ city: z.string().max(12) });
const weatherDescription = 'The weather in a city';
const weather = ({ city }: { city: string }): string => `${ANSWER} (${city})`;

/** The Agents SDK's final answer after its tool call. */
const finalAnswer = z.object({ answer: z.string().max(24) });

/** The structured reply: an integer and a string. */
const person = z.object({ name: z.string().max(12), age: z.number().int() });

const TOOL_TOKENS = 48;
const JSON_TOKENS = 64;

describe('agent SDKs against the platform', () => {
  let platform: TestPlatform;
  let v1: string;

  beforeAll(async () => {
    // The Agents SDK would export its traces to OpenAI; nothing leaves this machine.
    setTracingDisabled(true);
    platform = await TestPlatform.start({ env: { CONTEXT_SIZE: '2048', PARALLEL: '2' } });
    v1 = `${platform.baseUrl}/v1`;
  });

  afterAll(async () => {
    await platform?.stop();
  });

  describe('Vercel AI SDK', () => {
    const models: Array<[string, () => LanguageModel]> = [
      ['openai chat provider', () => createOpenAI({ baseURL: v1, apiKey: KEY }).chat(MODEL)],
      ['openai responses provider', () => createOpenAI({ baseURL: v1, apiKey: KEY }).responses(MODEL)],
      ['anthropic provider', () => createAnthropic({ baseURL: v1, apiKey: KEY })(MODEL)],
    ];

    describe.each(models)('%s', (_name, model) => {
      it('makes a forced tool call, sends its result back and gets a final answer', async () => {
        const result = await generateText({
          model: model(),
          prompt: ASK,
          tools: {
            get_weather: tool({ description: weatherDescription, inputSchema: weatherInput, execute: weather }),
          },
          // The first step must call the tool; the second answers with its result and calls nothing.
          toolChoice: { type: 'tool', toolName: 'get_weather' },
          prepareStep: ({ stepNumber }) => (stepNumber === 0 ? {} : { toolChoice: 'none' }),
          stopWhen: stepCountIs(2),
          maxOutputTokens: TOOL_TOKENS,
        });
        expect(result.steps).toHaveLength(2);
        const [call] = result.steps[0]!.toolCalls;
        expect(call).toMatchObject({ toolName: 'get_weather', input: { city: expect.any(String) } });
        expect(result.steps[0]!.toolResults[0]).toMatchObject({
          toolCallId: call!.toolCallId,
          output: expect.stringContaining(ANSWER),
        });
        expect(result.steps[1]!.toolCalls).toEqual([]);
        expect(typeof result.text).toBe('string');
      });

      it('returns a structured reply that fits a zod schema', async () => {
        const result = await generateText({
          model: model(),
          prompt: 'Make up a person.',
          output: Output.object({ schema: person }),
          maxOutputTokens: JSON_TOKENS,
        });
        expect(person.parse(result.output)).toEqual(result.output);
      });
    });
  });

  describe('OpenAI Agents SDK (Responses)', () => {
    // The SDK's own client, on the Responses API it uses by default.
    const model = () => new OpenAIProvider({ baseURL: v1, apiKey: KEY, useResponses: true }).getModel(MODEL);

    it('makes a forced tool call, sends its result back and gets a final answer', async () => {
      let called = 0;
      const agent = new Agent({
        name: 'Weather',
        instructions: 'Answer questions about the weather.',
        model: await model(),
        tools: [
          agentTool({
            name: 'get_weather',
            description: weatherDescription,
            parameters: weatherInput,
            execute: (input) => {
              called++;
              return weather(input);
            },
            // Offered until called once: left free to call again, a random-weight model may keep calling
            // (the reply is a call or the output's JSON) until the run's turns run out.
            isEnabled: () => called === 0,
          }),
        ],
        // The SDK forces the tool for the first turn only (resetToolChoice), then lets the model answer.
        modelSettings: { toolChoice: 'get_weather', maxTokens: TOOL_TOKENS },
        // The SDK fails a turn cut short by max tokens (status incomplete), and random weights all but
        // never end a text reply; a grammar-constrained final answer ends once its JSON does.
        outputType: finalAnswer,
      });
      const result = await run(agent, ASK, { maxTurns: 3 });
      const kinds = result.newItems.map((item) => item.type);
      expect(kinds.slice(0, 2)).toEqual(['tool_call_item', 'tool_call_output_item']);
      const call = result.newItems[0]!.rawItem as AgentOutputItem;
      expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
      expect(JSON.parse((call as { arguments: string }).arguments)).toEqual({ city: expect.any(String) });
      expect(result.newItems[1]!.rawItem).toMatchObject({ type: 'function_call_result' });
      expect(finalAnswer.parse(result.finalOutput)).toEqual(result.finalOutput);
    });

    it('returns a structured reply that fits a zod schema', async () => {
      const agent = new Agent({
        name: 'People',
        instructions: 'Make up a person.',
        model: await model(),
        outputType: person,
        modelSettings: { maxTokens: JSON_TOKENS },
      });
      const result = await run(agent, 'Make up a person.');
      expect(person.parse(result.finalOutput)).toEqual(result.finalOutput);
    });
  });

  describe('LangChain JS', () => {
    const weatherTool = () =>
      langchainTool(weather, { name: 'get_weather', description: weatherDescription, schema: weatherInput });
    const chats: Array<[string, () => ChatOpenAI | ChatAnthropic]> = [
      [
        'ChatOpenAI',
        () => new ChatOpenAI({ model: MODEL, apiKey: KEY, configuration: { baseURL: v1 }, maxTokens: TOOL_TOKENS }),
      ],
      [
        'ChatAnthropic',
        () =>
          new ChatAnthropic({ model: MODEL, apiKey: KEY, anthropicApiUrl: platform.baseUrl, maxTokens: TOOL_TOKENS }),
      ],
    ];

    describe.each(chats)('%s', (_name, chat) => {
      it('makes a forced tool call, sends its result back and gets a final answer', async () => {
        const llm = chat();
        const get = weatherTool();
        const question = new HumanMessage(ASK);
        const first: AIMessage = await llm.bindTools([get], { tool_choice: 'get_weather' }).invoke([question]);
        expect(first.tool_calls).toHaveLength(1);
        const call = first.tool_calls![0]!;
        expect(call).toMatchObject({ name: 'get_weather', args: { city: expect.any(String) }, id: expect.any(String) });
        // Invoked with the call, the tool answers with the message that carries its result.
        const result = await get.invoke(call);
        expect(result).toMatchObject({ tool_call_id: call.id, content: expect.stringContaining(ANSWER) });
        const final: AIMessage = await llm.bindTools([get], { tool_choice: 'none' }).invoke([question, first, result]);
        expect(final.tool_calls ?? []).toEqual([]);
        expect(typeof final.content === 'string' || Array.isArray(final.content)).toBe(true);
      });

      it('returns a structured reply that fits a zod schema', async () => {
        const llm = chat();
        llm.maxTokens = JSON_TOKENS;
        const reply = await llm.withStructuredOutput(person, { name: 'person' }).invoke('Make up a person.');
        expect(person.parse(reply)).toEqual(reply);
      });
    });
  });
});
