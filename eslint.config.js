// ESLint flat config: @eslint/js and typescript-eslint recommended, typed linting for the promise rules, the React hooks
// rules for the console, Prettier owning layout.
//
// Type-aware rules: the four about promises (a floating promise whose rejection nobody hears, which ends a Node process;
// a promise where a callback's return is ignored; an `await` of a non-promise; an `async` that awaits nothing), not
// the whole `recommendedTypeChecked` set. Its `no-unsafe-*` family reports every read of an untyped JSON answer in the
// tests, and its other rules mostly ask for type-assertion and template-literal tidying: churn across the tree that
// finds few bugs, where these four find the ones that crash a process or lose an error.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import prettier from "eslint-config-prettier/flat";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

const tsFiles = ["openapi/**/*.ts", "services/**/*.ts", "bench/**/*.ts", "testing/**/*.ts", "deploy/**/*.ts", "*.ts"];
const consoleUiFiles = ["services/console/src/ui/**/*.ts", "services/console/src/ui/**/*.tsx"];
const testFiles = ["**/test/**/*.ts", "**/*.test.ts", "testing/**/*.ts"];

export default defineConfig(
  { ignores: ["**/node_modules/**", "**/dist/**", "**/coverage/**", ".cairn/**", ".test-data/**", "openapi/src/generated/**"] },
  {
    files: tsFiles,
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { globals: globals.node },
    rules: {
      // A leading underscore marks a deliberately unused name (Express's 4-argument error handler, `{ x: _x, ...rest }`
      // to drop a field), the same names tsc's noUnusedLocals/noUnusedParameters let through.
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
    },
  },
  {
    // The console's pages run in a browser; its hooks follow the Rules of Hooks (Preact's hooks keep React's rules).
    files: consoleUiFiles,
    extends: [js.configs.recommended, tseslint.configs.recommended, reactHooks.configs.flat.recommended],
    languageOptions: { globals: globals.browser },
  },
  {
    // Typed linting: each file is checked with the program of the tsconfig.json nearest to it that includes it
    // (the root one, or services/console/tsconfig.json for the console's pages).
    files: [...tsFiles, ...consoleUiFiles],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      // `Promise.all(ids.map((id) => inFlight.get(id)))`: waiting for whichever of them is in flight, undefined where none is.
      "@typescript-eslint/await-thenable": ["error", { allowMixedPromiseArrays: true }],
      "require-await": "off",
      "@typescript-eslint/require-await": "error",
    },
  },
  {
    files: testFiles,
    rules: {
      // Tests and their stubs read untyped JSON answers and poke at deliberately malformed input: `any` is the point there.
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
  prettier,
);
