import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/drizzle/**',
      '**/coverage/**',
      '.mnemo-data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Library code logs through pino (server) or returns errors (client); only entry points print.
    files: ['contract/src/**', 'server/src/**', 'client/src/**'],
    ignores: ['server/src/main.ts', 'server/src/commands/**'],
    rules: { 'no-console': 'error' },
  },
);
