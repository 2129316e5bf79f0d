// Small figures-and-tables helpers shared by the benches.
import { performance } from 'node:perf_hooks';

/** @returns {number} */
export const now = () => performance.now();
/**
 * @param {number} ms
 * @returns {Promise<void>}
 */
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** @param {number} ms */
export const fmtMs = (ms) => `${ms.toFixed(2)} ms`;
/** @param {number} ms */
export const fmtSigned = (ms) => `${ms >= 0 ? '+' : ''}${ms.toFixed(2)} ms`;

/**
 * Nearest-rank percentile.
 * @param {number[]} values
 * @param {number} p
 * @returns {number}
 */
export function pct(values, p) {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * The median: the mean of the two middle values for an even count.
 * @param {number[]} values
 * @returns {number}
 */
export function median(values) {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * A Markdown table, first column left-aligned, the rest right-aligned.
 * @param {string[]} headers
 * @param {(string | number)[][]} rows
 * @returns {string}
 */
export function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map(String));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  /** @param {string[]} r */
  const line = (r) =>
    '| ' + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |';
  return [line(cells[0]), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...cells.slice(1).map(line)].join(
    '\n',
  );
}
