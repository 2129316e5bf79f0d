import type { BoolVar, EnumVar, IntVar } from './env-var.js';
import {
  declaration,
  type BoolName,
  type DefaultedName,
  type EnumName,
  type EnumValue,
  type EnvName,
  type IntName,
  type StringName,
} from './env-vars.js';

type Env = Record<string, string | undefined>;

/**
 * Reads typed values from the environment, collecting every problem instead of stopping at the first.
 * It reads declared variables only (see env-vars.ts), with the default and range declared there unless
 * the caller derives a default of its own. Blank values are unset; values are trimmed.
 */
export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  string(name: StringName): string {
    return this.optionalString(name) ?? (declaration(name) as { default: string }).default;
  }

  optionalString(name: EnvName): string | undefined {
    const raw = this.read(name)?.trim();
    return raw ? raw : undefined;
  }

  int(name: IntName & DefaultedName): number;
  int(name: IntName, fallback: number): number;
  int(name: IntName, derived?: number): number {
    const { min, max, default: declared } = declaration(name) as IntVar;
    const fallback = derived ?? declared!;
    const raw = this.read(name)?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  oneOf<N extends EnumName & DefaultedName>(name: N): EnumValue<N> {
    const { values, default: fallback } = declaration(name) as EnumVar & { default: string };
    const raw = this.read(name)?.trim();
    if (!raw) return fallback as EnumValue<N>;
    if (!values.includes(raw)) {
      this.problems.push(`${name} must be one of ${values.join(', ')} (got "${raw}")`);
      return fallback as EnumValue<N>;
    }
    return raw as EnumValue<N>;
  }

  bool(name: BoolName & DefaultedName): boolean;
  bool(name: BoolName, fallback: boolean): boolean;
  bool(name: BoolName, derived?: boolean): boolean {
    const fallback = derived ?? (declaration(name) as BoolVar).default!;
    const raw = this.read(name)?.trim().toLowerCase();
    if (!raw) return fallback;
    if (['1', 'true', 'yes'].includes(raw)) return true;
    if (['0', 'false', 'no'].includes(raw)) return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  /**
   * A variable the deployments file names (an upstream's `apiKeyEnv`): the operator chooses its name
   * there, so the reference cannot declare it.
   */
  named(name: string): string | undefined {
    const raw = this.env[name]?.trim();
    return raw ? raw : undefined;
  }

  check(ok: boolean, problem: string): void {
    if (!ok) this.problems.push(problem);
  }

  /** The raw value; an undeclared name throws (see declaration), so nothing is read undocumented. */
  private read(name: EnvName): string | undefined {
    declaration(name);
    return this.env[name];
  }
}
