import { describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '@conveyor/config';
import { ANY_HOST_ROUTES } from '../apps/api/src/http/request-checks.js';

// Docker and Kubernetes cannot run here: these checks hold the manifests to the code they deploy.
const ROOT = resolve(import.meta.dirname, '..');
const INFRA = join(ROOT, 'infra');
const read = (path: string) => readFileSync(join(INFRA, path), 'utf8');

type Doc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
};
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
  it.each(['api', 'worker-cpu', 'worker-gpu', 'worker-vision'])(
    '%s builds on Node 24 and runs a file the build produces',
    (name) => {
      const text = read(`docker/${name}.Dockerfile`);
      expect(text).toMatch(/^FROM node:24-/m);
      const cmd = JSON.parse(text.match(/^CMD (\[.*\])$/m)![1]) as string[];
      const entry = cmd[1].replace(/^dist\//, '').replace(/\.js$/, '.ts');
      expect(existsSync(join(ROOT, entry))).toBe(true);
    },
  );

  it('the api image lets the user it runs as write the local file store (DATA_DIR, without FILE_STORE)', () => {
    const text = read('docker/api.Dockerfile');
    expect(text).toMatch(/^RUN mkdir -p data && chown node:node data$/m);
    expect(text.indexOf('chown node:node data')).toBeLessThan(text.indexOf('USER node'));
  });

  it('the cpu worker gives libuv one thread, so a token is decoded and sampled on the same one', () => {
    expect(read('docker/worker-cpu.Dockerfile')).toMatch(/^ENV .*\bUV_THREADPOOL_SIZE=1\b/m);
  });

  it('the vision worker builds llama-server into the image, with its libraries, and names it', () => {
    const text = read('docker/worker-vision.Dockerfile');
    expect(text).toContain('npm run -s build:llama-server');
    expect(text).toMatch(/^COPY --from=build \/opt\/llama\.cpp \/opt\/llama\.cpp$/m);
    expect(text).toMatch(/\bLLAMA_SERVER_BIN=\/opt\/llama\.cpp\/llama-server\b/);
    expect(text).toMatch(/\bLD_LIBRARY_PATH=\/opt\/llama\.cpp\b/);
    expect(text).toMatch(/\bUV_THREADPOOL_SIZE=1\b/);
  });

  it('the gpu worker runs on a CUDA base and asks for the gpu pool', () => {
    const text = read('docker/worker-gpu.Dockerfile');
    expect(text).toMatch(/^FROM nvidia\/cuda:\S+-runtime/m);
    expect(text).toContain('"--pool", "gpu"');
  });
});

/** Compose's `${NAME:-default}`, as it reads with nothing set in the environment. */
const withDefaults = (value: string): string => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

describe('infra: compose', () => {
  const compose = parse(read('compose/compose.yaml')) as { services: Record<string, Record<string, unknown>> };
  const environment = (service: string): Record<string, string> =>
    Object.fromEntries(
      Object.entries(compose.services[service].environment as Record<string, string>).map(([k, v]) => [
        k,
        withDefaults(String(v)),
      ]),
    );

  it('has redis, object storage, scalable api replicas behind a balancer, and a scalable cpu worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'lb', 'minio', 'minio-init', 'redis', 'worker-cpu']);
    // A fixed name or published port would stop `--scale api=N` and `--scale worker-cpu=N`.
    for (const name of ['api', 'worker-cpu']) {
      expect(compose.services[name]).not.toHaveProperty('container_name');
      expect(compose.services[name]).not.toHaveProperty('ports');
    }
    expect((compose.services.api.deploy as { replicas: number }).replicas).toBeGreaterThanOrEqual(2);
    expect(compose.services.lb.ports).toEqual(['8000:8000']);
    const nginx = read('compose/nginx.conf');
    expect(nginx).toMatch(/set \$api http:\/\/api:8000;/);
    // Re-resolved through Docker's DNS, so every replica (and a later --scale) gets requests.
    expect(nginx).toMatch(/resolver 127\.0\.0\.11 /);
    // Streams, both ways: uploads of any size the API allows, and SSE replies.
    expect(nginx).toMatch(/proxy_buffering off;/);
    expect(nginx).toMatch(/client_max_body_size 0;/);
  });

  it('gives every api replica the same S3 file store: the bucket the init service creates, on the minio service', () => {
    const env = environment('api');
    const { fileStore } = loadConfig({ ...env, CONVEYOR_CONFIG: undefined });
    expect(fileStore).toMatchObject({
      kind: 's3',
      bucket: 'conveyor',
      endpoint: 'http://minio:9000',
      forcePathStyle: true,
    });
    const init = compose.services['minio-init'];
    expect(init.command).toEqual([
      'mb',
      '--ignore-existing',
      `local/${fileStore.kind === 's3' ? fileStore.bucket : ''}`,
    ]);
    // The init's alias, the server's root user and the api's credentials are one account.
    const minio = environment('minio');
    expect(environment('minio-init').MC_HOST_local).toBe(
      `http://${minio.MINIO_ROOT_USER}:${minio.MINIO_ROOT_PASSWORD}@minio:9000`,
    );
    expect([env.AWS_ACCESS_KEY_ID, env.AWS_SECRET_ACCESS_KEY]).toEqual([
      minio.MINIO_ROOT_USER,
      minio.MINIO_ROOT_PASSWORD,
    ]);
    expect(compose.services.api.depends_on).toMatchObject({
      'minio-init': { condition: 'service_completed_successfully' },
    });
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

  it('lets the API answer on the published port and to the other containers, by default', () => {
    const env = compose.services.api.environment as Record<string, string>;
    // Compose's own default: ${NAME:-default}.
    const allowed = /^\$\{ALLOWED_HOSTS:-(.*)\}$/.exec(env.ALLOWED_HOSTS)![1];
    const { allowedHosts } = loadConfig({ ALLOWED_HOSTS: allowed }).api;
    expect(allowedHosts).toEqual(expect.arrayContaining(['localhost', '127.0.0.1', 'api']));
  });
});

describe('infra: Kubernetes', () => {
  const config = loadEmbedded(k8sDocs.find((d) => d.metadata.name === 'conveyor-config')!.data!['conveyor.yaml']);
  const deployments = new Map(k8sDocs.filter((d) => d.kind === 'Deployment').map((d) => [d.metadata.name, d]));
  const scaled = k8sDocs.filter((d) => d.kind === 'ScaledObject');
  type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
  const apiEnv = () =>
    (deployments.get('conveyor-api')!.spec as { template: { spec: { containers: { env: EnvVar[] }[] } } }).template.spec
      .containers[0]!.env;

  it('every manifest names its kind, name and namespace', () => {
    for (const d of k8sDocs) {
      expect(d.apiVersion).toBeTruthy();
      expect(d.kind).toBeTruthy();
      expect(d.metadata.name).toBeTruthy();
      if (d.kind !== 'Namespace') expect(d.metadata.namespace).toBe('conveyor');
    }
  });

  it("scales each worker pool with KEDA on the API's pending-work signal, keeping one warm worker and one spare", () => {
    expect(scaled.map((s) => s.metadata.name).sort()).toEqual(['conveyor-worker-cpu', 'conveyor-worker-gpu']);
    const service = k8sDocs.find((d) => d.kind === 'Service' && d.metadata.name === 'conveyor-api')!;
    const allowed = apiEnv()
      .find((e) => e.name === 'ALLOWED_HOSTS')!
      .value!.replace('$(POD_IP)', '10.42.0.7');
    const { allowedHosts } = loadConfig({ ALLOWED_HOSTS: allowed }).api;
    for (const s of scaled) {
      const spec = s.spec as {
        scaleTargetRef: { name: string };
        minReplicaCount: number;
        advanced: { scalingModifiers: { target: string; formula: string; metricType: string } };
        triggers: { type: string; name: string; metadata: Record<string, string> }[];
      };
      expect(deployments.has(spec.scaleTargetRef.name)).toBe(true);
      expect(spec.minReplicaCount).toBe(2);
      const pool = spec.scaleTargetRef.name.endsWith('gpu') ? 'gpu' : 'cpu';
      // One trigger: the pool's signal, from the API's Service, by a name the API answers to.
      expect(spec.triggers).toHaveLength(1);
      const [trigger] = spec.triggers;
      expect(trigger!.type).toBe('metrics-api');
      const url = new URL(trigger!.metadata.url!);
      expect(url.pathname).toBe(`/scaling/pools/${pool}`);
      expect(url.hostname).toBe(`${service.metadata.name}.${service.metadata.namespace}.svc`);
      expect(allowedHosts).toContain(url.hostname);
      expect(trigger!.metadata.valueLocation).toBe('value');
      // A worker for every `parallel` jobs of the pool, plus one worker's worth to spare.
      const parallel = Math.max(...config.deployments.filter((d) => d.pool === pool).map((d) => d.parallel));
      expect(trigger!.metadata.targetValue).toBe(String(parallel));
      expect(spec.advanced.scalingModifiers).toEqual({
        target: String(parallel),
        metricType: 'AverageValue',
        formula: `${trigger!.name} + ${parallel}`,
      });
    }
  });

  it("lets the API answer to its Service's names and, for Prometheus, its pod's IP; probes use routes any Host may reach", () => {
    const pod = (deployments.get('conveyor-api')!.spec as { template: { spec: Record<string, unknown> } }).template
      .spec;
    type Probe = { httpGet: { path: string } };
    const [container] = pod.containers as {
      env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
      livenessProbe: Probe;
      readinessProbe: Probe;
    }[];
    const names = container.env.map((e) => e.name);
    const podIp = container.env.find((e) => e.name === 'POD_IP')!;
    expect(podIp.valueFrom?.fieldRef?.fieldPath).toBe('status.podIP');
    // Kubernetes expands $(POD_IP) only from a variable defined before it.
    expect(names.indexOf('POD_IP')).toBeLessThan(names.indexOf('ALLOWED_HOSTS'));
    const value = container.env.find((e) => e.name === 'ALLOWED_HOSTS')!.value!;
    const { allowedHosts } = loadConfig({ ALLOWED_HOSTS: value.replace('$(POD_IP)', '10.42.0.7') }).api;
    const service = k8sDocs.find((d) => d.kind === 'Service' && d.metadata.name === 'conveyor-api')!;
    const { name, namespace } = service.metadata;
    expect(allowedHosts).toEqual(
      expect.arrayContaining([name, `${name}.${namespace}`, `${name}.${namespace}.svc.cluster.local`, '10.42.0.7']),
    );
    expect(loadConfig({ ALLOWED_HOSTS: value.replace('$(POD_IP)', 'fd00::7') }).api.allowedHosts).toContain(
      '[fd00::7]',
    );
    for (const probe of [container.livenessProbe, container.readinessProbe])
      expect(ANY_HOST_ROUTES.has(probe.httpGet.path)).toBe(true);
  });

  it('gives the api replicas one shared S3 file store, with credentials from an optional Secret', () => {
    const api = deployments.get('conveyor-api')!.spec as {
      replicas: number;
      template: { spec: { containers: Array<Record<string, unknown>> } };
    };
    expect(api.replicas).toBeGreaterThanOrEqual(2);
    const [container] = api.template.spec.containers as Array<{
      env: Array<{ name: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>;
      envFrom: Array<{ configMapRef: { name: string; optional?: boolean } }>;
    }>;
    // Required: without it a replica would keep files on its own disk, and refuse to start beside the others.
    expect(container.envFrom).toEqual([{ configMapRef: { name: 'conveyor-file-store' } }]);
    const fileStore = k8sDocs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'conveyor-file-store')!;
    expect(loadConfig(fileStore.data!).fileStore).toMatchObject({ kind: 's3', bucket: 'conveyor-files' });
    const secrets = Object.fromEntries(
      container.env.filter((e) => e.name.startsWith('AWS_')).map((e) => [e.name, e.valueFrom?.secretKeyRef]),
    );
    // Optional: an IAM role for the pods (the SDK's chain) may stand in for keys.
    expect(secrets).toEqual({
      AWS_ACCESS_KEY_ID: { name: 'conveyor-s3', key: 'access-key-id', optional: true },
      AWS_SECRET_ACCESS_KEY: { name: 'conveyor-s3', key: 'secret-access-key', optional: true },
    });
  });

  it('worker pods serve their pool and get time to finish their jobs on SIGTERM', () => {
    for (const pool of ['cpu', 'gpu']) {
      const pod = (deployments.get(`conveyor-worker-${pool}`)!.spec as { template: { spec: Record<string, unknown> } })
        .template.spec;
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
      const [container] = pod.containers as { args: string[] }[];
      expect(container.args).toEqual(['--pool', pool]);
    }
  });
});
