import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const root = resolve(import.meta.dirname, '..');

/** The README is the front door: what a visitor needs first, with the rest one click away in docs/. */
const README_MAX_BYTES = 10_240;

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** Every page whose links must resolve. */
const pages = [join(root, 'README.md'), join(root, 'bench/README.md'), ...markdownUnder(join(root, 'docs'))];

/** The text outside fenced code blocks, where a `#` starts a comment and `[x](y)` is code, not a link. */
function prose(markdown: string): string[] {
  let fence: string | undefined;
  const lines: string[] = [];
  for (const line of markdown.split('\n')) {
    const opening = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (opening && (fence === undefined || opening.startsWith(fence))) {
      fence = fence === undefined ? opening : undefined;
      continue;
    }
    if (fence === undefined) lines.push(line.replace(/`[^`]*`/g, (code) => (code.includes('](') ? '``' : code)));
  }
  return lines;
}

/** GitHub's anchor for a heading: its text, lowercased, punctuation other than '-' and '_' dropped, spaces to '-'. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub. */
function anchors(path: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(readFileSync(path, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** Relative link targets: inline `[text](target)`, images included, and reference definitions `[ref]: target`. */
function links(path: string): string[] {
  const targets: string[] = [];
  for (const line of prose(readFileSync(path, 'utf8'))) {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]);
    const definition = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition) targets.push(definition[1]);
  }
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Why a link does not resolve, or undefined when it does. */
function problem(from: string, target: string): string | undefined {
  const [file, anchor] = target.split('#', 2) as [string, string | undefined];
  const to = file === '' ? from : resolve(dirname(from), decodeURIComponent(file));
  if (!existsSync(to)) return 'no such file';
  if (anchor === undefined || anchor === '') return undefined;
  if (!to.endsWith('.md')) return 'an anchor into a file that is not Markdown';
  return anchors(to).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : 'no heading with that anchor';
}

describe('documentation links', () => {
  it('finds the pages it checks', () => {
    expect(pages.map((page) => relative(root, page))).toEqual(
      expect.arrayContaining(['README.md', 'bench/README.md', 'docs/api.md']),
    );
  });

  it('resolve: every relative link names a file that exists, and a heading of it when it has an anchor', () => {
    const broken = pages.flatMap((page) =>
      links(page).flatMap((target) => {
        const why = problem(page, target);
        return why === undefined ? [] : [`${relative(root, page)}: ${target} (${why})`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('keeps README.md under 10 KiB', () => {
    expect(statSync(join(root, 'README.md')).size).toBeLessThan(README_MAX_BYTES);
  });
});

describe('heading anchors', () => {
  it.each([
    [
      'Engines: in process, a llama.cpp server child, or an upstream',
      'engines-in-process-a-llamacpp-server-child-or-an-upstream',
    ],
    ['A faster llama.cpp for node-llama-cpp (optional)', 'a-faster-llamacpp-for-node-llama-cpp-optional'],
    ['`batch-accept.bench.mjs`: accepting a 50,000-line batch', 'batch-acceptbenchmjs-accepting-a-50000-line-batch'],
    ['Prompt reuse, chunked prefill and the fleet', 'prompt-reuse-chunked-prefill-and-the-fleet'],
    ['In process: `llama-cpp`', 'in-process-llama-cpp'],
    ['snake_case and [a link](x.md)', 'snake_case-and-a-link'],
  ])('%s -> #%s', (heading, anchor) => {
    expect(slug(heading)).toBe(anchor);
  });
});
