import { checkGeneration, type CheckedGeneration, type GenerationBody } from '@conveyor/protocol';
import type { ParsedBatchBody } from '../contracts/batch-endpoint.js';

/**
 * A generating body as a batch line takes it: the one generation check its route makes, then the job
 * and the images that check gave. `view`: what the line's response shows that only the body says.
 */
export function generationLine(body: GenerationBody, view?: ParsedBatchBody['view']): ParsedBatchBody {
  let checked: CheckedGeneration | undefined;
  const passed = (): CheckedGeneration => {
    if (!checked) throw new Error('A batch line is checked before it becomes a job.');
    return checked;
  };
  return {
    model: body.model,
    check: (deployment, images) => {
      checked = checkGeneration(body, deployment, images);
    },
    toJob: (requestId) => passed().toJob(requestId),
    images: () => passed().images(),
    ...(view ? { view } : {}),
  };
}
