/**
 * One environment variable as the configuration reference declares it. The reader takes its default
 * and its range from here, and docs/configuration.md is generated from the same entries, so what a
 * variable does and what the page says cannot part.
 */
interface Described {
  /** What it decides, in an operator's words: a sentence or two. */
  meaning: string;
  /** The default in words, where it is derived from other settings or is not one value. */
  defaultText?: string;
  /** What it takes, in words, where its kind alone does not say (a URL, a list, a format). */
  allowedText?: string;
}

/** An integer within [min, max]. */
export interface IntVar extends Described {
  kind: 'int';
  default?: number;
  min: number;
  max: number;
}

/** One of a fixed list of words. */
export interface EnumVar extends Described {
  kind: 'enum';
  default?: string;
  values: readonly string[];
}

/** true / 1 / yes or false / 0 / no, in any case. */
export interface BoolVar extends Described {
  kind: 'bool';
  default?: boolean;
}

/** Free text whose form, if any, the code that reads it checks (a URL, a path, a list). */
export interface TextVar extends Described {
  kind: 'text';
  default?: string;
}

export type EnvVarSpec = IntVar | EnumVar | BoolVar | TextVar;
