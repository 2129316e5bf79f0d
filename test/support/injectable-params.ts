import 'reflect-metadata';
import type { DynamicModule, Provider, Type } from '@nestjs/common';

/**
 * The constructor parameters of a module's class providers that Nest could not inject: TypeScript
 * records `Object` or `Function` as a parameter's type when it names an interface or a class imported
 * with `import type` (no value to inject), and a parameter with neither a real type nor an `@Inject`
 * token fails only when the app starts. Each entry is `Class#index`.
 */
export function uninjectableParameters(module: DynamicModule): string[] {
  const classes = (module.providers ?? []).flatMap((p: Provider) =>
    typeof p === 'function' ? [p] : 'useClass' in p ? [p.useClass] : [],
  ) as Type[];
  const problems: string[] = [];
  for (const cls of classes) {
    const types = (Reflect.getMetadata('design:paramtypes', cls) ?? []) as unknown[];
    const tokens = new Set(
      ((Reflect.getMetadata('self:paramtypes', cls) ?? []) as { index: number }[]).map((t) => t.index),
    );
    types.forEach((type, index) => {
      if (tokens.has(index)) return;
      if (type === undefined || type === Object || type === Function) problems.push(`${cls.name}#${index}`);
    });
  }
  return problems;
}
