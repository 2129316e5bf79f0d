type Env = Record<string, string | undefined>;

/** Reads typed values from the environment, collecting every problem instead of stopping at the first. */
export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  string(name: string, fallback: string): string {
    const raw = this.env[name]?.trim();
    return raw ? raw : fallback;
  }

  optionalString(name: string): string | undefined {
    const raw = this.env[name]?.trim();
    return raw ? raw : undefined;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.env[name]?.trim();
    if (!raw) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.env[name]?.trim().toLowerCase();
    if (!raw) return fallback;
    if (['1', 'true', 'yes'].includes(raw)) return true;
    if (['0', 'false', 'no'].includes(raw)) return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  check(ok: boolean, problem: string): void {
    if (!ok) this.problems.push(problem);
  }
}
