// Small figures-and-tables helpers shared by the benches.
import { performance } from 'node:perf_hooks';

export const now = () => performance.now();
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const fmtMs = (ms) => `${ms.toFixed(2)} ms`;
export const fmtSigned = (ms) => `${ms >= 0 ? '+' : ''}${ms.toFixed(2)} ms`;

/** Nearest-rank percentile. */
export function pct(values, p) {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** A Markdown table, first column left-aligned, the rest right-aligned. */
export function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map(String));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => '| ' + r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ') + ' |';
  return [line(cells[0]), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...cells.slice(1).map(line)].join('\n');
}
