// A dependency-free SVG line chart: a few series over categorical x values.
const escape = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** Round up to a tidy multiple of a power of ten, so the axis ends on a round value. */
function niceCeil(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((m) => m * power).find((v) => v >= value);
}

/**
 * @param {{title: string, subtitle?: string, xLabel: string, yLabel: string, categories: (string|number)[],
 *          series: {name: string, color: string, values: number[]}[]}} spec
 */
export function lineChartSvg({ title, subtitle = '', xLabel, yLabel, categories, series }) {
  const width = 720;
  const height = 440;
  const m = { left: 70, right: 30, top: 70, bottom: 90 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const yMax = niceCeil(Math.max(...series.flatMap((s) => s.values.filter(Number.isFinite))) * 1.1);
  const x = (i) => m.left + (categories.length === 1 ? plotW / 2 : (i * plotW) / (categories.length - 1));
  const y = (v) => m.top + plotH - (v / yMax) * plotH;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`);
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  out.push(`<text x="${width / 2}" y="28" text-anchor="middle" font-size="17" font-weight="bold">${escape(title)}</text>`);
  if (subtitle) out.push(`<text x="${width / 2}" y="50" text-anchor="middle" fill="#555">${escape(subtitle)}</text>`);
  for (let t = 0; t <= 5; t++) {
    const v = (yMax * t) / 5;
    out.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    out.push(`<text x="${m.left - 8}" y="${y(v) + 4}" text-anchor="end" fill="#333">${Math.round(v)}</text>`);
  }
  categories.forEach((c, i) => out.push(`<text x="${x(i)}" y="${m.top + plotH + 20}" text-anchor="middle" fill="#333">${escape(c)}</text>`));
  out.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#333"/>`);
  out.push(`<text x="${m.left + plotW / 2}" y="${m.top + plotH + 44}" text-anchor="middle">${escape(xLabel)}</text>`);
  out.push(`<text transform="translate(18 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escape(yLabel)}</text>`);
  for (const s of series) {
    const points = s.values.map((v, i) => [x(i), y(v)]).filter(([, py]) => Number.isFinite(py));
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2.5" points="${points.map((p) => p.join(',')).join(' ')}"/>`);
    s.values.forEach((v, i) => {
      if (!Number.isFinite(v)) return;
      // The highest point at this x is labelled above, the others below, so close values stay readable.
      const highest = series.every((o) => !(o.values[i] > v));
      out.push(`<circle cx="${x(i)}" cy="${y(v)}" r="4" fill="${s.color}"/>`);
      out.push(`<text x="${x(i)}" y="${highest ? y(v) - 9 : y(v) + 18}" text-anchor="middle" font-size="11" fill="${s.color}">${Math.round(v)}</text>`);
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
