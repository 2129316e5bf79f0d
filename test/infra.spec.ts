import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '@conveyor/config';
import { chatQueueName } from '@conveyor/queue';

// Docker and Kubernetes cannot run here: these checks hold the manifests to the code they deploy.
const ROOT = resolve(import.meta.dirname, '..');
const INFRA = join(ROOT, 'infra');
const read = (path: string) => readFileSync(join(INFRA, path), 'utf8');

type Doc = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: Record<string, unknown>; data?: Record<string, string> };
const k8sDocs: Doc[] = readdirSync(join(INFRA, 'k8s')).flatMap((file) =>
  parseAllDocuments(read(`k8s/${file}`)).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as Doc;
  }),
);

/** Validates an embedded deployments file with the same loader the apps use. */
function loadEmbedded(yamlText: string) {
  const path = join(mkdtempSync(join(tmpdir(), 'conveyor-infra-')), 'conveyor.yaml');
  writeFileSync(path, yamlText);
  return loadConfig({ CONVEYOR_CONFIG: path });
}

function redisDirectives(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.split(/\s+/)[0], l.slice(l.indexOf(' ') + 1)] as [string, string]),
  );
}

describe('infra: Redis', () => {
  it.each([
    ['redis/redis.conf', read('redis/redis.conf')],
    ['k8s redis ConfigMap', k8sDocs.find((d) => d.metadata.name === 'conveyor-redis-config')!.data!['redis.conf']],
  ])('%s keeps jobs: noeviction and AOF', (_name, text) => {
    const conf = redisDirectives(text);
    expect(conf.get('maxmemory-policy')).toBe('noeviction');
    expect(conf.get('appendonly')).toBe('yes');
    expect(conf.get('appendfsync')).toBe('everysec');
  });
});

describe('infra: container images', () => {
  it.each(['api', 'worker-cpu', 'worker-gpu'])('%s builds on Node 24 and runs a file the build produces', (name) => {
    const text = read(`docker/${name}.Dockerfile`);
    expect(text).toMatch(/^FROM node:24-/m);
    const cmd = JSON.parse(text.match(/^CMD (\[.*\])$/m)![1]) as string[];
    const entry = cmd[1].replace(/^dist\//, '').replace(/\.js$/, '.ts');
    expect(existsSync(join(ROOT, entry))).toBe(true);
  });

  it('the cpu worker gives libuv one thread, so a token is decoded and sampled on the same one', () => {
    expect(read('docker/worker-cpu.Dockerfile')).toMatch(/^ENV .*\bUV_THREADPOOL_SIZE=1\b/m);
  });

  it('the gpu worker runs on a CUDA base and asks for the gpu pool', () => {
    const text = read('docker/worker-gpu.Dockerfile');
    expect(text).toMatch(/^FROM nvidia\/cuda:\S+-runtime/m);
    expect(text).toContain('"--pool", "gpu"');
  });
});

describe('infra: compose', () => {
  const compose = parse(read('compose/compose.yaml')) as { services: Record<string, Record<string, unknown>> };

  it('has redis, api and a scalable cpu worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'redis', 'worker-cpu']);
    // A fixed name or published port would stop `--scale worker-cpu=N`.
    expect(compose.services['worker-cpu']).not.toHaveProperty('container_name');
    expect(compose.services['worker-cpu']).not.toHaveProperty('ports');
  });

  it('builds from Dockerfiles and mounts files that exist', () => {
    for (const service of Object.values(compose.services)) {
      const build = service.build as { context: string; dockerfile: string } | undefined;
      if (build) expect(existsSync(join(INFRA, 'compose', build.context, build.dockerfile))).toBe(true);
      for (const volume of (service.volumes as string[] | undefined) ?? []) {
        const source = volume.split(':')[0];
        if (source.startsWith('.')) expect(existsSync(join(INFRA, 'compose', source))).toBe(true);
      }
    }
  });

  it("ships a deployments file the platform's own validator accepts", () => {
    expect(loadEmbedded(read('compose/conveyor.yaml')).deployments.map((d) => d.id)).toEqual(['conveyor-tiny']);
  });
});

describe('infra: Kubernetes', () => {
  const config = loadEmbedded(k8sDocs.find((d) => d.metadata.name === 'conveyor-config')!.data!['conveyor.yaml']);
  const deployments = new Map(k8sDocs.filter((d) => d.kind === 'Deployment').map((d) => [d.metadata.name, d]));
  const scaled = k8sDocs.filter((d) => d.kind === 'ScaledObject');

  it('every manifest names its kind, name and namespace', () => {
    for (const d of k8sDocs) {
      expect(d.apiVersion).toBeTruthy();
      expect(d.kind).toBeTruthy();
      expect(d.metadata.name).toBeTruthy();
      if (d.kind !== 'Namespace') expect(d.metadata.namespace).toBe('conveyor');
    }
  });

  it('scales each worker pool with KEDA, keeping one warm worker and one spare', () => {
    expect(scaled.map((s) => s.metadata.name).sort()).toEqual(['conveyor-worker-cpu', 'conveyor-worker-gpu']);
    for (const s of scaled) {
      const spec = s.spec as { scaleTargetRef: { name: string }; minReplicaCount: number; triggers: { metadata: { listName: string } }[] };
      expect(deployments.has(spec.scaleTargetRef.name)).toBe(true);
      expect(spec.minReplicaCount).toBe(2);
      const pool = spec.scaleTargetRef.name.endsWith('gpu') ? 'gpu' : 'cpu';
      const expected = config.deployments.filter((d) => d.pool === pool).map((d) => `${config.redis.prefix}:${chatQueueName(d.id)}:wait`);
      expect(spec.triggers.map((t) => t.metadata.listName).sort()).toEqual(expected.sort());
    }
  });

  it('worker pods serve their pool and get time to finish their jobs on SIGTERM', () => {
    for (const pool of ['cpu', 'gpu']) {
      const pod = (deployments.get(`conveyor-worker-${pool}`)!.spec as { template: { spec: Record<string, unknown> } }).template.spec;
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
      const [container] = pod.containers as { args: string[] }[];
      expect(container.args).toEqual(['--pool', pool]);
    }
  });
});

describe("infra: KEDA's list is BullMQ's wait list", () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const prefix = `infra-${randomBytes(4).toString('hex')}`;

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('a job waiting for a worker sits in <prefix>:<queue>:wait as a list', async () => {
    const queue = new Queue(chatQueueName('probe'), { connection: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }, prefix });
    await queue.add('chat', { n: 1 });
    await queue.close();
    const key = `${prefix}:${chatQueueName('probe')}:wait`;
    expect(await redis.type(key)).toBe('list');
    expect(await redis.llen(key)).toBe(1);
  });
});
