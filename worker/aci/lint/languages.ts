/** Which checker a file gets, decided by its name. */
import path from "node:path";
import type { GrammarName } from "./grammars.js";

export type Checker = { kind: "tree-sitter"; grammar: GrammarName } | { kind: "json" } | { kind: "yaml" };

const byExtension: Record<string, GrammarName> = {
  ".py": "python",
  ".pyi": "python",
  ".js": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".jsx": "javascript",
  ".ts": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".tsx": "tsx",
  ".go": "go",
  ".rs": "rust",
  ".java": "java",
  ".rb": "ruby",
  ".rake": "ruby",
  ".gemspec": "ruby",
  ".c": "c",
  ".h": "c",
  ".cc": "cpp",
  ".cpp": "cpp",
  ".cxx": "cpp",
  ".c++": "cpp",
  ".hh": "cpp",
  ".hpp": "cpp",
  ".hxx": "cpp",
  ".cs": "c-sharp",
  ".php": "php",
  ".sh": "bash",
  ".bash": "bash",
  ".css": "css",
};

const byName: Record<string, GrammarName> = { Rakefile: "ruby", Gemfile: "ruby", ".bashrc": "bash" };

/** JSON files that allow comments (JSONC): JSON.parse would reject valid ones, so they go unchecked. */
const jsoncNames = /^(tsconfig.*|jsconfig.*|devcontainer|settings|launch|tasks|extensions)\.json$/;

/**
 * The checkers to try, in order; an edit passes when one of them finds no new error. A `.h` file may
 * be C or C++, so it gets both. An empty list means the language is not checked.
 */
export function checkersFor(filePath: string): Checker[] {
  const name = path.posix.basename(filePath);
  const extension = path.posix.extname(name).toLowerCase();
  if (extension === ".json") return jsoncNames.test(name) ? [] : [{ kind: "json" }];
  if (extension === ".yml" || extension === ".yaml") return [{ kind: "yaml" }];
  const grammar = byName[name] ?? byExtension[extension];
  if (!grammar) return [];
  if (extension === ".h")
    return [
      { kind: "tree-sitter", grammar: "c" },
      { kind: "tree-sitter", grammar: "cpp" },
    ];
  return [{ kind: "tree-sitter", grammar }];
}

export function checkerLabel(checker: Checker): string {
  return checker.kind === "tree-sitter" ? checker.grammar : checker.kind;
}
