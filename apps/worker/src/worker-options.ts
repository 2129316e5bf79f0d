import { EnvReader, type DeploymentConfig, type PlatformConfig, type Pool } from '@conveyor/config';

/** Which deployments this worker process serves: `--pool cpu|gpu` or `--deployments a,b` (or WORKER_POOL / WORKER_DEPLOYMENTS). */
export function selectDeployments(
  config: PlatformConfig,
  argv: string[],
  env: Record<string, string | undefined>,
): DeploymentConfig[] {
  const flag = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) return argv[i + 1];
    return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  };
  const r = new EnvReader(env);
  const ids = flag('deployments') ?? r.optionalString('WORKER_DEPLOYMENTS');
  if (ids) {
    const wanted = ids
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = wanted.filter((id) => !config.deployments.some((d) => d.id === id));
    if (unknown.length)
      throw new Error(
        `Unknown deployment(s) ${unknown.join(', ')}; configured: ${config.deployments.map((d) => d.id).join(', ')}`,
      );
    return config.deployments.filter((d) => wanted.includes(d.id));
  }
  // The flag and WORKER_POOL share the check below, so the variable is read as text, with its declared default.
  const pool = (flag('pool') ?? r.string('WORKER_POOL')) as Pool;
  if (pool !== 'cpu' && pool !== 'gpu') throw new Error(`--pool must be cpu or gpu (got "${pool}")`);
  const served = config.deployments.filter((d) => d.pool === pool);
  if (!served.length) throw new Error(`No deployment is in the ${pool} pool; nothing for this worker to serve.`);
  return served;
}
