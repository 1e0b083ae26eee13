import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

/** Imports that run a command string (issue 9); every block that sets no-restricted-imports repeats them. */
const SHELL_IMPORTS = [
  { name: "child_process", importNames: ["exec", "execSync"], message: "Runs a shell command string: use spawn/execFile (or execa) with an argument array." },
  { name: "node:child_process", importNames: ["exec", "execSync"], message: "Runs a shell command string: use spawn/execFile (or execa) with an argument array." },
  { name: "execa", importNames: ["execaCommand", "execaCommandSync", "$"], message: "Parses a command string or template: use execa(file, args)." },
];

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
      // Security: never build a shell command string (issue 9). Processes get argument arrays;
      // test/unit/repo/security.test.ts checks that each of these catches its bad snippet.
      "no-restricted-properties": ["error",
        { object: "child_process", property: "exec", message: "Use execa/spawn with an argument array." },
        { object: "child_process", property: "execSync", message: "Use spawnSync with an argument array." },
        { property: "execaCommand", message: "execaCommand parses a command string: use execa(file, args)." },
        { property: "execaCommandSync", message: "execaCommandSync parses a command string: use execa(file, args)." },
        { property: "sendText", message: "Never type a built command into a terminal; use a Task with ProcessExecution." }],
      "no-restricted-imports": ["error", { paths: SHELL_IMPORTS }],
      "no-restricted-syntax": ["error",
        { selector: "Property[key.name='shell']:not([value.value=false]), Property[key.value='shell']:not([value.value=false])", message: "A shell (shell: true or a shell path) is forbidden: pass argument arrays with shell: false." },
        { selector: "ImportDeclaration[source.value=/^(node:)?child_process$/] > :matches(ImportNamespaceSpecifier, ImportDefaultSpecifier)", message: "Import child_process functions by name (spawn, execFile), so that exec/execSync stay caught." },
        { selector: "ImportDeclaration[source.value='execa'] > :matches(ImportNamespaceSpecifier, ImportDefaultSpecifier)", message: "Import execa by name, so that execaCommand and $ stay caught." },
        { selector: "CallExpression[callee.name='require'][arguments.0.value=/^(node:)?child_process$/], ImportExpression[source.value=/^(node:)?child_process$/]", message: "Import child_process functions by name (spawn, execFile), so that exec/execSync stay caught." },
        { selector: "VariableDeclarator > ObjectPattern > Property[key.name=/^(exec|execSync|execaCommand|execaCommandSync|\\$)$/]", message: "Destructures a function that runs a command string: use spawn/execFile/execa with an argument array." },
        { selector: "TaggedTemplateExpression[tag.name=/^(\\$|execa|execaSync|execaNode)$/], TaggedTemplateExpression[tag.property.name=/^(\\$|execa|execaSync|execaNode)$/], TaggedTemplateExpression[tag.callee.name=/^(\\$|execa|execaSync|execaNode)$/]", message: "execa's template form builds a command from a string: use execa(file, args)." },
        { selector: "NewExpression[callee.name='ShellExecution'], NewExpression[callee.property.name='ShellExecution']", message: "ShellExecution runs a command line through a shell: use a CustomExecution with run/processTerminal.ts." },
        { selector: "NewExpression[callee.name='ProcessExecution'], NewExpression[callee.property.name='ProcessExecution']", message: "VS Code resolves ${...} in a ProcessExecution's command, arguments, cwd and env (and runs ${command:...}): use a CustomExecution with run/processTerminal.ts." }],
    },
  },
  // Issue 20 item 5: the engine is made of small walkers (one statement kind, one rule check each).
  { files: ["server/src/engine/**/*.ts"], rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }] } },
  // The three roots (docs/architecture.md, "Roots"); test/unit/repo/roots.test.ts checks that these bite.
  // common/ is imported by both processes (client/ and server/), so it imports neither and never
  // `vscode` (the CLI and the MCP server run without VS Code).
  // server/ is the language server, the CLI and the MCP server: plain Node processes, never VS Code's;
  // it and client/ (the extension host) never import each other: what both need lives in common/.
  { files: ["client/**/*.ts"], rules: { "no-restricted-imports": ["error", {
    paths: SHELL_IMPORTS,
    patterns: [{ group: ["**/server/**"], message: "client/ never imports server/ (another process): what both need lives in common/." }],
  }] } },
  { files: ["server/**/*.ts"], rules: { "no-restricted-imports": ["error", {
    paths: [...SHELL_IMPORTS, { name: "vscode", message: "server/ runs in plain Node (language server, CLI, MCP server): no vscode module there." }],
    patterns: [{ group: ["**/client/**"], message: "server/ never imports client/ (another process): what both need lives in common/." }],
  }] } },
  { files: ["common/**/*.ts"], rules: { "no-restricted-imports": ["error", {
    paths: [...SHELL_IMPORTS, { name: "vscode", message: "common/ runs outside VS Code too (CLI, MCP server): take what you need as a parameter." }],
    patterns: [{ group: ["**/client/**", "**/server/**"], message: "common/ imports neither client/ nor server/: move what it needs into common/." }],
  }] } },
);
