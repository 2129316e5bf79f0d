// Dependency-free SVG charts: a line chart of a few series over categorical x values, and grouped bars in panels.
/** @type {Record<string, string>} */
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
/** @param {string | number} s */
const escape = (s) => String(s).replace(/[&<>"]/g, (c) => ENTITIES[c]);

/**
 * Round up to a tidy multiple of a power of ten, so the axis ends on a round value.
 * @param {number} value
 * @returns {number}
 */
function niceCeil(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  // 10 × power is above `value`, so the search always ends on a step.
  return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((m) => m * power).find((v) => v >= value) ?? 10 * power;
}

/**
 * @param {{title: string, subtitle?: string, xLabel: string, yLabel: string, categories: (string|number)[],
 *          series: {name: string, color: string, values: number[]}[]}} spec
 * @returns {string} the SVG document
 */
export function lineChartSvg({ title, subtitle = '', xLabel, yLabel, categories, series }) {
  const width = 720;
  const height = 440;
  const m = { left: 70, right: 30, top: 70, bottom: 90 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const yMax = niceCeil(Math.max(...series.flatMap((s) => s.values.filter(Number.isFinite))) * 1.1);
  /** @param {number} i */
  const x = (i) => m.left + (categories.length === 1 ? plotW / 2 : (i * plotW) / (categories.length - 1));
  /** @param {number} v */
  const y = (v) => m.top + plotH - (v / yMax) * plotH;
  /** @type {string[]} */
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(
    `<text x="${width / 2}" y="28" text-anchor="middle" font-size="17" font-weight="bold">${escape(title)}</text>`,
  );
  if (subtitle) out.push(`<text x="${width / 2}" y="50" text-anchor="middle" fill="#555">${escape(subtitle)}</text>`);
  for (let t = 0; t <= 5; t++) {
    const v = (yMax * t) / 5;
    out.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    out.push(`<text x="${m.left - 8}" y="${y(v) + 4}" text-anchor="end" fill="#333">${Math.round(v)}</text>`);
  }
  categories.forEach((c, i) =>
    out.push(`<text x="${x(i)}" y="${m.top + plotH + 20}" text-anchor="middle" fill="#333">${escape(c)}</text>`),
  );
  out.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#333"/>`);
  out.push(`<text x="${m.left + plotW / 2}" y="${m.top + plotH + 44}" text-anchor="middle">${escape(xLabel)}</text>`);
  out.push(
    `<text transform="translate(18 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(yLabel)}</text>`,
  );
  for (const s of series) {
    const points = s.values.map((v, i) => [x(i), y(v)]).filter(([, py]) => Number.isFinite(py));
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2.5" points="${points.map((p) => p.join(',')).join(' ')}"/>`,
    );
    s.values.forEach((v, i) => {
      if (!Number.isFinite(v)) return;
      // The highest point at this x is labelled above, the others below, so close values stay readable.
      const highest = series.every((o) => !(o.values[i] > v));
      out.push(`<circle cx="${x(i)}" cy="${y(v)}" r="4" fill="${s.color}"/>`);
      out.push(
        `<text x="${x(i)}" y="${highest ? y(v) - 9 : y(v) + 18}" text-anchor="middle" font-size="11" fill="${s.color}">${Math.round(v)}</text>`,
      );
    });
  }
  series.forEach((s, i) => {
    const lx = m.left + i * 220;
    const ly = height - 22;
    out.push(`<rect x="${lx}" y="${ly - 10}" width="14" height="14" fill="${s.color}"/>`);
    out.push(`<text x="${lx + 20}" y="${ly + 2}">${escape(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/**
 * A figure as a short label: whole numbers from 100 up, fewer decimals the larger it is.
 * @param {number} v
 * @returns {string}
 */
function shortNumber(v) {
  const a = Math.abs(v);
  return a >= 100 || a === 0 ? String(Math.round(v)) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/**
 * A dependency-free SVG of grouped bars in small panels, each panel with its own scale and unit, so
 * figures of different kinds (ms, tokens/s) stand side by side. In each group there is one bar per
 * series that has a value anywhere in the panel; a `null` value leaves its place empty.
 * @param {{title: string, subtitle?: string, series: {name: string, color: string}[], columns?: number,
 *          panels: {title: string, unit: string, groups: {label: string, values: (number | null)[]}[]}[]}} spec
 * @returns {string} the SVG document
 */
export function barChartSvg({ title, subtitle = '', series, panels, columns = 2 }) {
  const panelW = 390;
  const panelH = 260;
  const top = 70;
  const cols = Math.max(1, Math.min(columns, panels.length));
  const rows = Math.ceil(panels.length / cols);
  const width = cols * panelW + 20;
  const height = top + rows * panelH + 50;
  const m = { left: 60, right: 15, top: 34, bottom: 44 };
  const plotW = panelW - m.left - m.right;
  const plotH = panelH - m.top - m.bottom;
  /** @type {string[]} */
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(
    `<text x="${width / 2}" y="28" text-anchor="middle" font-size="17" font-weight="bold">${escape(title)}</text>`,
  );
  if (subtitle) out.push(`<text x="${width / 2}" y="50" text-anchor="middle" fill="#555">${escape(subtitle)}</text>`);
  panels.forEach((panel, p) => {
    const px = 10 + (p % cols) * panelW;
    const py = top + Math.floor(p / cols) * panelH;
    const used = series.map((_, j) => j).filter((j) => panel.groups.some((g) => Number.isFinite(g.values[j] ?? NaN)));
    const finite = panel.groups.flatMap((g) => g.values.map((v) => v ?? NaN).filter(Number.isFinite));
    const yMax = niceCeil(Math.max(0, ...finite) * 1.15);
    /** @param {number} v */
    const y = (v) => py + m.top + plotH - (v / yMax) * plotH;
    out.push(
      `<text x="${px + m.left + plotW / 2}" y="${py + 18}" text-anchor="middle" font-size="12" font-weight="bold">${escape(`${panel.title} (${panel.unit})`)}</text>`,
    );
    for (let t = 0; t <= 4; t++) {
      const v = (yMax * t) / 4;
      out.push(`<line x1="${px + m.left}" x2="${px + m.left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
      out.push(`<text x="${px + m.left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#333">${shortNumber(v)}</text>`);
    }
    const groupW = plotW / Math.max(1, panel.groups.length);
    const barW = Math.min(44, (groupW * 0.8) / Math.max(1, used.length));
    panel.groups.forEach((group, g) => {
      const gx = px + m.left + g * groupW;
      const x0 = gx + (groupW - barW * used.length) / 2;
      used.forEach((j, k) => {
        const v = group.values[j];
        if (v === null || v === undefined || !Number.isFinite(v)) return;
        const bx = x0 + k * barW;
        out.push(
          `<rect x="${bx + 1}" y="${y(v)}" width="${barW - 2}" height="${py + m.top + plotH - y(v)}" fill="${series[j].color}"/>`,
        );
        out.push(
          `<text x="${bx + barW / 2}" y="${y(v) - 4}" text-anchor="middle" font-size="10" fill="#333">${shortNumber(v)}</text>`,
        );
      });
      out.push(
        `<text x="${gx + groupW / 2}" y="${py + m.top + plotH + 16}" text-anchor="middle" fill="#333">${escape(group.label)}</text>`,
      );
    });
    out.push(
      `<line x1="${px + m.left}" x2="${px + m.left + plotW}" y1="${py + m.top + plotH}" y2="${py + m.top + plotH}" stroke="#333"/>`,
    );
  });
  series.forEach((s, i) => {
    const lx = 20 + i * 230;
    const ly = height - 20;
    out.push(`<rect x="${lx}" y="${ly - 10}" width="14" height="14" fill="${s.color}"/>`);
    out.push(`<text x="${lx + 20}" y="${ly + 2}">${escape(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
