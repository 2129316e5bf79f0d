import { Logger, type FactoryProvider } from '@nestjs/common';
import { PLATFORM_CONFIG, type DeploymentConfig, type PlatformConfig } from '@conveyor/config';
import { LlamaCppEngine, resolveModelSource, type ChatEngine } from '@conveyor/engine';
import { CHAT_ENGINE, SERVED_DEPLOYMENT } from './chat-engine.token.js';

const logger = new Logger('Engine');

/** Loads the deployment's model once, then runs one short generation so the first request is not a cold one. */
export async function loadEngine(deployment: DeploymentConfig, modelsDir: string): Promise<ChatEngine> {
  const started = Date.now();
  const modelPath = await resolveModelSource(deployment.model, modelsDir, logger);
  const engine = await LlamaCppEngine.load({
    modelPath,
    contextSize: deployment.contextSize,
    parallel: deployment.parallel,
    threads: deployment.threads,
    gpu: false,
  });
  await engine.generate(
    { messages: [{ role: 'user', content: 'warm-up' }], sampling: { temperature: 0 }, maxTokens: 1, stop: [] },
    { onStart: () => undefined, onText: () => undefined },
  );
  logger.log(
    `Loaded ${modelPath} for "${deployment.id}" in ${Date.now() - started} ms ` +
      `(context ${deployment.contextSize} x ${deployment.parallel} sequences, ${deployment.threads} thread(s))`,
  );
  return engine;
}

export const engineProvider: FactoryProvider<Promise<ChatEngine>> = {
  provide: CHAT_ENGINE,
  inject: [PLATFORM_CONFIG, SERVED_DEPLOYMENT],
  useFactory: (config: PlatformConfig, deployment: DeploymentConfig) => loadEngine(deployment, config.modelsDir),
};
