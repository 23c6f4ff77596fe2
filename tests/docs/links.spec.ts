import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repositoryRoot } from '@acct/testing';

import { anchorsOf, brokenBecause, isExternal, Link, linksOf } from './markdown-links';

/** The documents a user of a clone reads: the README, docs/, each app's README and the k8s guide. */
function documents(): string[] {
  const found = ['README.md', 'k8s/README.md', 'bench/README.md'];
  for (const app of fs.readdirSync(path.join(repositoryRoot, 'apps'))) found.push(`apps/${app}/README.md`);
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(repositoryRoot, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md')) found.push(relative);
    }
  };
  walk('docs');
  return found.filter((file) => fs.existsSync(path.join(repositoryRoot, file)));
}

describe('the documentation', () => {
  const texts = new Map(documents().map((file) => [file, fs.readFileSync(path.join(repositoryRoot, file), 'utf8')]));
  const links: Link[] = [...texts].flatMap(([file, text]) => linksOf(file, text));

  it('does not send readers to files a clone does not have (the specification it was built from)', () => {
    const outside = [...texts].filter(([, text]) => /\.\.\/shared\//.test(text)).map(([file]) => file);
    expect(outside).toEqual([]);
  });

  it('has a README that links the reference, and the reference that links the README back', () => {
    expect(links).toContainEqual(expect.objectContaining({ file: 'README.md', target: 'docs/reference.md' }));
    expect(links).toContainEqual(
      expect.objectContaining({ file: 'docs/reference.md', target: '../README.md#decisions' }),
    );
  });

  it('links only to files, folders and headings inside the repository', () => {
    expect(links.filter((link) => !isExternal(link.target)).length).toBeGreaterThan(20);
    const broken = links
      .filter((link) => !isExternal(link.target))
      .flatMap((link) => {
        const reason = brokenBecause(repositoryRoot, link);
        return reason ? [`${link.file}:${link.line} ${link.target} ${reason}`] : [];
      });
    expect(broken).toEqual([]);
  });
});

describe('the link checker', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'links-'));
  fs.mkdirSync(path.join(root, 'docs'));
  fs.writeFileSync(path.join(root, 'README.md'), '# Title\n\n## Rate limits & tiers\n\n## Rate limits & tiers\n');
  fs.writeFileSync(path.join(root, 'docs', 'a.md'), '# A `code` heading\n');
  const check = (file: string, target: string) => brokenBecause(root, { file, line: 1, target });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('finds links in prose, not in code, and tells external ones apart', () => {
    const markdown = [
      'See [the guide](docs/a.md#a-code-heading) and ![logo](img.png "Logo").',
      '`[not](a-link.md)` and',
      '```md',
      '[nor](this.md)',
      '```',
      '[ref]: docs/a.md',
      'and [a site](https://example.com).',
    ].join('\n');
    expect(linksOf('README.md', markdown).map((link) => link.target)).toEqual([
      'docs/a.md#a-code-heading',
      'img.png',
      'docs/a.md',
      'https://example.com',
    ]);
    expect(isExternal('https://example.com')).toBe(true);
    expect(isExternal('../shared/spec/interface.md')).toBe(false);
  });

  it('names GitHub’s anchors for headings, repeated ones numbered', () => {
    expect([...anchorsOf('# Rate limits & tiers\n## Rate limits & tiers\n### `code` (v1)\n')]).toEqual([
      'rate-limits--tiers',
      'rate-limits--tiers-1',
      'code-v1',
    ]);
  });

  it('accepts files, folders and anchors that exist, and refuses the rest', () => {
    expect(check('README.md', 'docs/a.md#a-code-heading')).toBeUndefined();
    expect(check('docs/a.md', '../README.md#rate-limits--tiers-1')).toBeUndefined();
    expect(check('README.md', 'docs')).toBeUndefined();
    expect(check('README.md', '#title')).toBeUndefined();
    expect(check('README.md', 'docs/b.md')).toBe('names no file or folder');
    expect(check('README.md', 'docs/a.md#missing')).toBe('has no heading #missing');
    expect(check('README.md', '../shared/spec/interface.md')).toBe('points outside the repository');
  });
});
