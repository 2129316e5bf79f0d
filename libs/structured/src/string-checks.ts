import { createContext, Script } from 'node:vm';

const regexCache = new Map<string, RegExp | null>();

/** `pattern` as ECMA-262 with the `u` flag, as JSON Schema specifies; null when it does not compile. */
export function schemaRegExp(pattern: string): RegExp | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    // Patterns written for other engines often escape characters the `u` flag refuses (`\-`, `\/`).
    re = compile(pattern, 'u') ?? compile(pattern, '');
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

/** Longer strings are matched under a time limit: a pattern such as `^(a+)+$` backtracks for ever on some. */
const GUARD_FROM_LENGTH = 20;
const MATCH_TIMEOUT_MS = 50;
const sandbox = createContext({ re: /(?:)/, s: '' });
const matchScript = new Script('re.test(s)');

/**
 * Whether `re` matches `s`, in bounded time: a match that runs past MATCH_TIMEOUT_MS counts as none (a
 * request's own pattern cannot hold a process). Clients' patterns reach here both in the API (enum values
 * held to the schema beside them) and in the worker (results).
 */
export function matches(re: RegExp, s: string): boolean {
  if (s.length < GUARD_FROM_LENGTH) return re.test(s);
  sandbox.re = re;
  sandbox.s = s;
  try {
    return matchScript.runInContext(sandbox, { timeout: MATCH_TIMEOUT_MS }) === true;
  } catch {
    return false;
  } finally {
    sandbox.s = '';
  }
}

function compile(pattern: string, flags: string): RegExp | null {
  try {
    return new RegExp(pattern, flags);
  } catch {
    return null;
  }
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;

export function validDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return days !== undefined && d >= 1 && d <= days;
}

/** Formats checked on results; any other format is an annotation. */
export const FORMAT_CHECKS: Record<string, (s: string) => boolean> = {
  date: validDate,
  time: (s) => TIME.test(s),
  'date-time': (s) => {
    const [date, time, ...rest] = s.split(/[tT ]/);
    return rest.length === 0 && time !== undefined && validDate(date!) && TIME.test(time);
  },
  uuid: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s),
  email: (s) => /^[^\s@"]+@[^\s@]+\.[^\s@]+$/.test(s),
  ipv4: (s) => /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(s),
  hostname: (s) =>
    s.length <= 253 && /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(s),
  uri: (s) => /^[a-z][a-z0-9+.-]*:[^\s]*$/i.test(s),
};
