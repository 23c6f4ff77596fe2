// Type-checked TypeScript rules, sorted imports, Nx module boundaries; formatting is Prettier's.
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import importX from 'eslint-plugin-import-x';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

const LOAD_AFTER_TRACING =
  'main.ts loads the service only after startTracing (tracing patches gRPC, pg and Redis as they load): load it in the startTracing(...).then callback, with import() or require.';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      'dist/**',
      '**/generated/**',
      'coverage/**',
      '.nx/**',
      '.data/**',
      '**/*.cjs',
      '**/*.mjs',
      'tools/prisma/**',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@nx': nx, 'simple-import-sort': simpleImportSort, 'import-x': importX },
    settings: {
      'import-x/resolver': { node: { extensions: ['.ts', '.js'] } },
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      // No file import cycles (folder cycles: tools/lint/folder-cycles.mjs).
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          // Each main.ts loads @acct/grpc with import() so that it loads after startTracing (tracing
          // patches gRPC as it loads), not to split a bundle: the modules importing it statically are
          // loaded after that import too, so they do not undo it. The load order is checked in main.ts
          // itself (the rule for apps/*/src/main.ts below).
          checkDynamicDependenciesExceptions: ['@acct/grpc'],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:util', 'type:contracts'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util', 'type:contracts'] },
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:util', 'type:contracts'] },
          ],
        },
      ],
    },
  },
  {
    // Tracing patches HTTP, gRPC, pg and Redis as they load, so a main.ts loads the service (its own
    // modules, @acct/grpc) only once startTracing has run, with require or import(); types are free.
    files: ['apps/*/src/main.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: '@acct/grpc', allowTypeImports: true, message: LOAD_AFTER_TRACING }],
          patterns: [{ group: ['./*', '../*'], allowTypeImports: true, message: LOAD_AFTER_TRACING }],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', 'tests/**/*.ts', 'libs/testing/**/*.ts', 'e2e/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  prettier,
);
