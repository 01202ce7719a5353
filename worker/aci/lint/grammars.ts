/**
 * Tree-sitter grammars for the syntax gate. The runtime and most grammars come from
 * @vscode/tree-sitter-wasm (one matched release); C comes from tree-sitter-c's own .wasm, built for an
 * ABI the runtime accepts. Everything loads lazily once per process and is cached.
 */
import { createRequire } from "node:module";
import path from "node:path";
import type * as TreeSitter from "@vscode/tree-sitter-wasm";

const require = createRequire(import.meta.url);

export const treeSitterGrammars = [
  "bash",
  "c",
  "cpp",
  "c-sharp",
  "css",
  "go",
  "java",
  "javascript",
  "php",
  "python",
  "ruby",
  "rust",
  "tsx",
  "typescript",
] as const;
export type GrammarName = (typeof treeSitterGrammars)[number];

let runtime: Promise<typeof TreeSitter> | undefined;
const languages = new Map<GrammarName, Promise<TreeSitter.Language>>();
const parsers = new Map<GrammarName, TreeSitter.Parser>();

function loadRuntime(): Promise<typeof TreeSitter> {
  runtime ??= (async () => {
    const module = require("@vscode/tree-sitter-wasm") as typeof TreeSitter;
    await module.Parser.init();
    return module;
  })();
  return runtime;
}

/** Where a grammar's .wasm file is installed. */
function grammarWasmPath(name: GrammarName): string {
  if (name === "c") return require.resolve("tree-sitter-c/tree-sitter-c.wasm");
  const packageDir = path.dirname(require.resolve("@vscode/tree-sitter-wasm/package.json"));
  return path.join(packageDir, "wasm", `tree-sitter-${name}.wasm`);
}

export function loadGrammar(name: GrammarName): Promise<TreeSitter.Language> {
  let language = languages.get(name);
  if (!language) {
    language = loadRuntime().then((module) => module.Language.load(grammarWasmPath(name)));
    languages.set(name, language);
    // A failed load is not cached, so a later call can report the same error again.
    language.catch(() => languages.delete(name));
  }
  return language;
}

/** A parser for the grammar, reused across calls (parsing is synchronous, so sharing is safe). */
export async function parserFor(name: GrammarName): Promise<TreeSitter.Parser> {
  const cached = parsers.get(name);
  if (cached) return cached;
  const [module, language] = await Promise.all([loadRuntime(), loadGrammar(name)]);
  const parser = new module.Parser();
  parser.setLanguage(language);
  parsers.set(name, parser);
  return parser;
}
