// Flat config: typescript-eslint's recommended rules on the sources, tests and webview script.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "out/**", "node_modules/**", "*.vsix"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.mts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always"],
      "no-restricted-imports": ["error", { paths: [] }],
    },
  },
  {
    // Pure modules must stay testable without VS Code.
    files: [
      "src/render/**",
      "src/format/**",
      "src/locations.ts",
      "src/settings.ts",
      "src/pythonEnv.ts",
      "src/protocol.ts",
      "src/conversation.ts",
      "src/suggestions.ts",
      "src/chatAnswer.ts",
      "src/chatHistory.ts",
      "src/features.ts",
      "src/ids.ts",
      "src/mcpCommand.ts",
    ],
    rules: { "no-restricted-imports": ["error", { paths: [{ name: "vscode", message: "pure module: no vscode import" }] }] },
  },
  {
    files: ["media/**/*.js"],
    languageOptions: {
      sourceType: "script",
      globals: { window: "readonly", document: "readonly", HTMLElement: "readonly", setTimeout: "readonly", acquireVsCodeApi: "readonly" },
    },
  },
  {
    files: ["*.mjs"],
    languageOptions: { globals: { process: "readonly" } },
  },
);
