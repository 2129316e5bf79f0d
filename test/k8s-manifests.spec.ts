import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import * as keda from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as apps from 'kubernetes-models/apps/v1';
import * as core from 'kubernetes-models/v1';

const K8S = resolve(import.meta.dirname, '../infra/k8s');

/** A manifest document as kubernetes-models validates it: its class constructed from the document. */
type Model = { validate(): void };
type ModelClass = new (data: object) => Model;

/** The classes whose schemas the shipped manifests are checked against, by apiVersion and kind. */
const SCHEMAS: Record<string, Record<string, ModelClass>> = {
  v1: core as unknown as Record<string, ModelClass>,
  'apps/v1': apps as unknown as Record<string, ModelClass>,
  'keda.sh/v1alpha1': keda as unknown as Record<string, ModelClass>,
};

const documents = readdirSync(K8S)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(resolve(K8S, file), 'utf8')).map((doc, i) => {
      const data = doc.toJS() as { apiVersion: string; kind: string; metadata?: { name?: string } };
      return [`${file}#${i} ${data.kind} ${data.metadata?.name ?? ''}`, data] as const;
    }),
  );

describe('Kubernetes manifests', () => {
  it('ship a ScaledObject for each worker pool, and every kind they use has a schema here', () => {
    expect(documents.filter(([, d]) => d.kind === 'ScaledObject').length).toBe(2);
    for (const [name, doc] of documents)
      expect({ name, known: !!SCHEMAS[doc.apiVersion]?.[doc.kind] }).toEqual({ name, known: true });
  });

  it.each(documents)('%s matches the Kubernetes or KEDA schema of its kind', (_name, doc) => {
    const Model = SCHEMAS[doc.apiVersion]![doc.kind]!;
    expect(() => new Model(doc).validate()).not.toThrow();
  });

  it("scales each pool with one metrics-api trigger, the pool's signal, which the formula reads", () => {
    for (const [, doc] of documents.filter(([, d]) => d.kind === 'ScaledObject')) {
      const so = new keda.ScaledObject(doc as never);
      so.validate();
      const [trigger, ...others] = so.spec.triggers;
      expect(others).toEqual([]);
      expect(trigger!.type).toBe('metrics-api');
      // The scaler's parameters (the schema types them as strings): the signal's URL, where its value
      // is in the answer, and the target per replica.
      expect(Object.keys(trigger!.metadata).sort()).toEqual(['targetValue', 'url', 'valueLocation']);
      // The schema this package ships predates scalingModifiers, so their shape is checked here.
      const { scalingModifiers } = so.spec.advanced as { scalingModifiers?: { formula?: string; target?: string } };
      expect(scalingModifiers?.formula).toContain(trigger!.name!);
      expect(scalingModifiers?.target).toBe(trigger!.metadata.targetValue);
    }
  });

  it('a manifest with a mistake fails its schema (the check is not vacuous)', () => {
    const scaled = documents.find(([, d]) => d.kind === 'ScaledObject')![1] as unknown as {
      spec: { triggers: { metadata: object }[] };
    };
    const broken = { ...scaled, spec: { ...scaled.spec, triggers: [{ metadata: scaled.spec.triggers[0]!.metadata }] } };
    expect(() => new keda.ScaledObject(broken as never).validate()).toThrow(/type/);
  });
});
