// Folder import cycles inside an app: `apps/<app>/src/<folder>/…` importing `../<other>/…` makes an
// edge folder → other; a cycle of such edges (tokens/ → lockout/ → tokens/) is reported
// and fails lint (`npm run lint`, `npm test`): it exits 1 and names each cycle. Specs and test-support
// are left out: tests may drive a feature through the one that uses it. Run it:
// `node tools/lint/folder-cycles.mjs [project folder…]` (default: every app).
import fs from 'node:fs';
import path from 'node:path';

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/g;
const isProduction = (file) => file.endsWith('.ts') && !file.endsWith('.spec.ts') && !file.includes('test-support');

function* sources(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'generated' && entry.name !== 'test-support' && entry.name !== 'testing') yield* sources(full);
    } else if (isProduction(full)) yield full;
  }
}

/** The top-level folder of `file` under `srcDir` (files directly in src/ are the folder ''). */
const folderOf = (srcDir, file) => {
  const [first, ...rest] = path.relative(srcDir, file).split(path.sep);
  return rest.length === 0 ? '' : first;
};

/** Map folder → Set of folders it imports, for one app's `src` directory. */
export function folderGraph(srcDir) {
  const graph = new Map();
  for (const file of sources(srcDir)) {
    const from = folderOf(srcDir, file);
    if (!graph.has(from)) graph.set(from, new Set());
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = path.resolve(path.dirname(file), match[1]);
      if (!target.startsWith(srcDir + path.sep)) continue;
      const to = folderOf(srcDir, target + '.ts');
      // The app's root files (main.ts, app.module.ts) wire everything: they are not a feature.
      if (to !== from && from !== '' && to !== '') graph.get(from).add(to);
    }
  }
  return graph;
}

/** A path of folders from `start` back to `start`, or undefined. */
export function cycleThrough(graph, start) {
  const seen = new Set();
  const walk = (folder, trail) => {
    for (const next of graph.get(folder) ?? []) {
      if (next === start) return [...trail, next];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...trail, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

/** Every folder that lies on a cycle, with one cycle through it. */
export function folderCycles(srcDir) {
  const graph = folderGraph(srcDir);
  const cycles = [];
  for (const folder of graph.keys()) {
    const cycle = cycleThrough(graph, folder);
    if (cycle) cycles.push(cycle);
  }
  return cycles;
}

/** `apps/<app>` (or any project folder) whose `src/` is checked; none for a folder without one. */
export function cyclesOfProject(projectDir) {
  const srcDir = path.resolve(projectDir, 'src');
  return fs.existsSync(srcDir) ? folderCycles(srcDir) : [];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // Project folders to check (the nx lint target passes its own); by default every app of this repository.
  const root = path.resolve(import.meta.dirname, '../..');
  const given = process.argv.slice(2);
  const projects =
    given.length > 0 ? given : fs.readdirSync(path.join(root, 'apps')).map((app) => path.join(root, 'apps', app));
  let failed = false;
  for (const project of projects) {
    for (const cycle of cyclesOfProject(project)) {
      failed = true;
      const srcDir = path.relative(process.cwd(), path.resolve(project, 'src')) || '.';
      console.log(`${srcDir}: folder import cycle ${cycle.map((folder) => `${folder}/`).join(' → ')}`);
    }
  }
  process.exit(failed ? 1 : 0);
}
