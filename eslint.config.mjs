import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", ".e2e-tools/**", ".e2e-run/**", "examples/**", "test/fixtures/**", "bench/cache/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Custom LSP messages are tiny namespaces (vscode-eslint's style).
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // Security: never build a shell command string (issue 9). Processes get argument arrays.
      "no-restricted-properties": ["error",
        { object: "child_process", property: "exec", message: "Use execa/spawn with an argument array." },
        { object: "child_process", property: "execSync", message: "Use spawnSync with an argument array." },
        { property: "sendText", message: "Never type a built command into a terminal; use a Task with ProcessExecution." }],
      "no-restricted-syntax": ["error",
        { selector: "Property[key.name='shell'][value.value=true]", message: "shell: true is forbidden: pass argument arrays." }],
    },
  },
);
