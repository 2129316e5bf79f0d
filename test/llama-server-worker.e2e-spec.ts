import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnOwned } from './support/owned-processes.mjs';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import { llamaServerForTests } from './support/llama-server.js';
import { exited, TestPlatform, type ManagedProcess } from './support/platform.js';
import { alive } from './support/alive.js';
import { EVENTUALLY_MS } from './support/jobs.js';

const binary = await llamaServerForTests('the llama-server worker tests');
const describeWithServer = binary ? describe : describe.skip;

/** The pid of the llama-server a worker runs now, as its log names it when it starts or restarts one. */
function serverPid(worker: ManagedProcess): number {
  const output = worker.output.join('');
  const pids = [...output.matchAll(/llama-server (?:\S+ \(pid|restarted \(pid) (\d+)/g)].map((m) => Number(m[1]));
  if (!pids.length) throw new Error(`no llama-server pid in the worker's output:\n${output}`);
  return pids.at(-1)!;
}

async function until(check: () => boolean, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

// Workers whose deployment runs on a llama-server child: the generated vision preset, end to end.
describeWithServer('a worker serving the vision preset through llama-server', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    // A retried reply goes on from its text, which llama-server tokenizes again: the random model's text
    // comes back about a third longer in tokens than it was generated (1338 for 1000 measured). With
    // the default 4096 a 4000-token reply killed a few hundred tokens in filled its context before its
    // budget; 8192 leaves it room wherever the kill lands.
    platform = await TestPlatform.start({
      env: { MODEL: 'vision', LLAMA_SERVER_BIN: binary!, CONTEXT_SIZE: '8192' },
    });
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it('answers a chat through its llama-server child', async () => {
    const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused' });
    // ignore_eos: a vLLM / llama.cpp extra the openai client's types do not list; it sends it as it is.
    const reply = await client.chat.completions.create({
      model: 'conveyor-tiny-vision',
      messages: [{ role: 'user', content: 'Hello!' }],
      max_tokens: 6,
      ignore_eos: true,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming & { ignore_eos: boolean });
    expect(reply.choices[0]?.finish_reason).toBe('length');
    expect(reply.usage?.completion_tokens).toBe(6);
  });

  it("names the stop sequence llama-server stopped at as Messages' stop_sequence, sync and streamed", async () => {
    const greedy = {
      model: 'conveyor-tiny-vision',
      max_tokens: 30,
      temperature: 0,
      messages: [{ role: 'user', content: 'Tell me a long story.' }],
    };
    const post = async (body: object) => {
      const res = await fetch(`${platform.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'unused' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return res;
    };
    type Message = { content: { text: string }[]; stop_reason: string; stop_sequence: string | null };
    const full = ((await (await post(greedy)).json()) as Message).content[0]!.text;
    const stop = full.slice(10, 13);
    const message = (await (
      await post({ ...greedy, stop_sequences: ['never-generated-zzzz', stop] })
    ).json()) as Message;
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: stop });
    expect(message.content[0]!.text).toBe(full.slice(0, full.indexOf(stop)));
    const streamed = await (await post({ ...greedy, stop_sequences: [stop], stream: true })).text();
    const delta = streamed
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: unknown })
      .find((event) => event.type === 'message_delta');
    expect(delta?.delta).toEqual({ stop_reason: 'stop_sequence', stop_sequence: stop });
  });

  // Killed at its first text, and later, when the text the retry sends again is long.
  it.each([1, 150])(
    'finishes a streamed reply whose llama-server is killed at text chunk %i: the job is retried and the reply continues',
    async (killAt) => {
      const client = new OpenAI({ baseURL: `${platform.baseUrl}/v1`, apiKey: 'unused' });
      const pid = serverPid(platform.workers[0]!);
      const stream = await client.chat.completions.create({
        model: 'conveyor-tiny-vision',
        messages: [{ role: 'user', content: 'Tell me a long story.' }],
        max_tokens: 4000,
        stream: true,
        stream_options: { include_usage: true },
        ignore_eos: true,
      } as OpenAI.ChatCompletionCreateParamsStreaming & { ignore_eos: boolean });
      let killed = false;
      let texts = 0;
      let roles = 0;
      let finish: string | null | undefined;
      let completionTokens: number | undefined;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (choice?.delta.role) roles++;
        if (choice?.delta.content && !killed && ++texts >= killAt) {
          killed = true;
          process.kill(pid, 'SIGKILL');
        }
        if (choice?.finish_reason) finish = choice.finish_reason;
        if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
      }
      expect(killed).toBe(true);
      // One well-formed reply: one role chunk, and every token of the budget counted once across both attempts.
      expect(roles).toBe(1);
      expect(finish).toBe('length');
      expect(completionTokens).toBe(4000);
      expect(alive(pid)).toBe(false);
      await until(() => serverPid(platform.workers[0]!) !== pid, EVENTUALLY_MS);
    },
  );

  it('leaves no llama-server behind when the worker is stopped, or killed with SIGKILL', async () => {
    const first = platform.workers[0]!;
    const firstPid = serverPid(first);
    expect(alive(firstPid)).toBe(true);
    first.proc.kill('SIGTERM');
    expect(await exited(first)).toBe(0);
    expect(await gone(firstPid, EVENTUALLY_MS)).toBe(true);

    const second = await platform.startWorker();
    const secondPid = serverPid(second);
    expect(alive(secondPid)).toBe(true);
    // No exit handler runs on SIGKILL: the kernel's parent-death signal has to stop the child.
    second.proc.kill('SIGKILL');
    await exited(second);
    expect(await gone(secondPid, EVENTUALLY_MS)).toBe(true);
  });
});

describe('a worker whose deployment needs llama-server without a binary', () => {
  it('refuses to start with one message naming LLAMA_SERVER_BIN and the npm script', async () => {
    const worker = spawnOwned(process.execPath, [resolve(import.meta.dirname, '../dist/apps/worker/src/main.js')], {
      env: {
        ...process.env,
        MODEL: 'vision',
        LLAMA_SERVER_BIN: '/nonexistent/llama-server',
        REDIS_PREFIX: `test-no-llama-server-${process.pid}`,
        LOG_FORMAT: 'text',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    worker.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((r) => worker.once('exit', r));
    expect(code).toBe(1);
    expect(output).toContain(
      'Deployment "conveyor-tiny-vision" runs on llama-server: LLAMA_SERVER_BIN is /nonexistent/llama-server, which is not an executable file',
    );
    expect(output).toContain('npm run build:llama-server');
  });
});
