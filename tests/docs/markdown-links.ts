import fs from 'node:fs';
import path from 'node:path';

export interface Link {
  /** The Markdown file the link is in, relative to the repository. */
  file: string;
  line: number;
  target: string;
}

/** Inline links and images `[text](target "title")` and reference definitions `[id]: target`. */
const INLINE = /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
const DEFINITION = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/;

/** Every link of a Markdown text, outside fenced code blocks and code spans. */
export function linksOf(file: string, markdown: string): Link[] {
  const links: Link[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (opening && (!fence || opening.startsWith(fence))) {
      fence = fence ? undefined : opening;
      return;
    }
    if (fence) return;
    const prose = text.replace(/(`+)[^`]*?\1/g, '');
    const definition = DEFINITION.exec(prose);
    if (definition?.[1]) links.push({ file, line: index + 1, target: definition[1] });
    for (const match of prose.matchAll(INLINE)) {
      if (match[1]) links.push({ file, line: index + 1, target: match[1] });
    }
  });
  return links;
}

/** A URL with a scheme (`https:`, `mailto:`) or protocol-relative: not a file of the repository. */
export const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');

/** The anchors GitHub gives a Markdown file's headings (lower case, punctuation dropped, `-1` for repeats). */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const text of markdown.split('\n')) {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(text)?.[1];
    if (opening && (!fence || opening.startsWith(fence))) {
      fence = fence ? undefined : opening;
      continue;
    }
    const heading = fence ? undefined : /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * Why a relative link does not resolve inside `root`, or undefined when it does: the file or folder
 * must exist in the repository and, for a Markdown file, the `#anchor` must be one of its headings.
 */
export function brokenBecause(root: string, link: Link): string | undefined {
  const [pathPart = '', anchor] = link.target.split('#', 2);
  const decoded = decodeURIComponent(pathPart);
  const resolved = decoded ? path.resolve(root, path.dirname(link.file), decoded) : path.resolve(root, link.file);
  const inside = path.relative(root, resolved);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return 'points outside the repository';
  if (!fs.existsSync(resolved)) return 'names no file or folder';
  if (anchor && resolved.endsWith('.md') && !anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
    return `has no heading #${anchor}`;
  }
  return undefined;
}
