// Lint rules: the size rules (counted on prettier-formatted code) and the dependency directions between folders.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { AGENT_PORTS, NO_AGENT_IMPORTS, SHARED, onlyImports } from './scripts/layers.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test/fixtures/**'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      'no-console': ['error', { allow: ['error', 'warn'] }],
    },
  },
  {
    files: ['src/**/*.ts', 'tools/**/*.ts', 'schemas/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  // The test helpers follow the same size rules (tests themselves are not held to them: a describe body is a function).
  {
    files: ['test/support/**/*.ts'],
    ignores: ['test/support/**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false, IIFEs: true }],
    },
  },
  // Dependencies point one way (scripts/layers.mjs): the server never imports the agent side (src/cli wires the two),
  // the agent side imports only itself, the shared layer and its ports, and the shared layer only itself.
  {
    files: ['src/**/*.ts', 'tools/**/*.ts', 'schemas/**/*.ts'],
    ignores: ['src/agent/**', 'src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: NO_AGENT_IMPORTS, message: 'The server never imports the agent side (src/cli wires them).' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/agent/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: onlyImports('src/agent', [...SHARED, ...AGENT_PORTS]),
              message: 'The agent side imports only src/agent/, the shared layer and its ports (scripts/layers.mjs).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/shared/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: onlyImports('src/shared', SHARED),
              message: 'The shared layer imports only itself (scripts/layers.mjs).',
            },
          ],
        },
      ],
    },
  },
);
