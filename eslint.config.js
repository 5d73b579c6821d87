// ESLint (npm run lint:code, part of npm test's lint): a focused, type-aware rule set that the
// tree passes, for the two kinds of mistake the compiler lets through: a promise nobody awaits or
// catches, and a variable, import or parameter that is never used.
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "notebooks/**",
      "reports/**",
      "coverage/**",
      ".stryker-tmp/**",
      ".tools/**",
      "test/fixtures/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.cjs",
    ],
  },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // A promise must be awaited, returned, caught, or marked `void` on purpose.
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: true }],
      // Unused names; a leading underscore says "unused on purpose" (a destructured rest, a callback's slot).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { args: "after-used", argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
    },
  },
);
