// Lint rules (`npm run lint`, run by scripts/test.sh): the TypeScript sources are checked with their types, so a
// promise nobody awaits or a promise passed where a callback's result is ignored fails the build.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const browserGlobals = Object.fromEntries(
  [
    'window',
    'document',
    'fetch',
    'location',
    'localStorage',
    'sessionStorage',
    'console',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'URL',
    'URLSearchParams',
    'Chart',
    'SwaggerUIBundle',
    'Redoc',
    'HTMLElement',
    'Event',
    'prompt',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  // The generated word lists (scripts/build-english-words.ts, build-other-words.ts, build-synonyms.ts) are data, not code to review.
  {
    ignores: [
      'node_modules/**',
      '.tools/**',
      'dist/**',
      'coverage/**',
      'bench/results/**',
      'src/cache/dictionary/*-words.ts',
      'src/cache/synonyms/wordnet-groups.ts',
    ],
  },
  js.configs.recommended,
  // Validation and redaction match control characters on purpose (owners, model ids, upstream text).
  { rules: { 'no-control-regex': 'off' } },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['bin/**/*.js', 'eslint.config.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['src/http/api-docs/static/**/*.js'],
    languageOptions: { sourceType: 'script', globals: browserGlobals },
  },
);
