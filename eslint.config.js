// ESLint flat config: @eslint/js and typescript-eslint recommended (not the type-checked set), Prettier owning layout.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import prettier from "eslint-config-prettier/flat";
import globals from "globals";
import tseslint from "typescript-eslint";

const tsFiles = ["openapi/**/*.ts", "services/**/*.ts", "bench/**/*.ts", "testing/**/*.ts", "deploy/**/*.ts", "*.ts"];
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
    // The console's pages run in a browser.
    files: ["services/console/src/ui/**/*.ts", "services/console/src/ui/**/*.tsx"],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { globals: globals.browser },
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
