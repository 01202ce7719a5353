/**
 * Parses through tree-sitter with a small cache of recent trees: the file after an edit is parsed
 * incrementally from the tree of the file before it (tree.edit + parse(text, oldTree)), which is what
 * keeps the gate fast on large files. The newest trees are kept; the oldest are freed.
 */
import type * as TreeSitter from "@vscode/tree-sitter-wasm";
import { type GrammarName, parserFor } from "./grammars.js";

interface Entry {
  grammar: GrammarName;
  text: string;
  tree: TreeSitter.Tree;
}

const entries: Entry[] = [];
const maxEntries = 6;

function find(grammar: GrammarName, text: string): Entry | undefined {
  return entries.find(
    (entry) => entry.grammar === grammar && entry.text.length === text.length && entry.text === text,
  );
}

function pointAt(text: string, index: number): TreeSitter.Point {
  let row = 0;
  let lineStart = 0;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) {
    row++;
    lineStart = at + 1;
  }
  return { row, column: index - lineStart };
}

/** The single changed span between two texts (common prefix and suffix), as tree-sitter's Edit. */
export function textEdit(before: string, after: string): TreeSitter.Edit {
  const limit = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < limit && before.charCodeAt(prefix) === after.charCodeAt(prefix)) prefix++;
  let suffix = 0;
  while (
    suffix < limit - prefix &&
    before.charCodeAt(before.length - 1 - suffix) === after.charCodeAt(after.length - 1 - suffix)
  ) {
    suffix++;
  }
  const oldEnd = before.length - suffix;
  const newEnd = after.length - suffix;
  return {
    startIndex: prefix,
    oldEndIndex: oldEnd,
    newEndIndex: newEnd,
    startPosition: pointAt(before, prefix),
    oldEndPosition: pointAt(before, oldEnd),
    newEndPosition: pointAt(after, newEnd),
  };
}

/**
 * The tree of `text`; reused when cached, else parsed incrementally from the tree of `base` when that
 * one is cached, else parsed whole. The cache owns the tree: use it before the next call.
 */
export async function parseCached(
  grammar: GrammarName,
  text: string,
  base?: string,
): Promise<TreeSitter.Tree> {
  const hit = find(grammar, text);
  if (hit) return hit.tree;
  const parser = await parserFor(grammar);
  const from = base === undefined ? undefined : find(grammar, base);
  let tree: TreeSitter.Tree | null;
  if (from) {
    const old = from.tree.copy();
    old.edit(textEdit(from.text, text));
    tree = parser.parse(text, old);
    old.delete();
  } else {
    tree = parser.parse(text);
  }
  if (!tree) throw new Error(`tree-sitter returned no tree for ${grammar}`);
  entries.unshift({ grammar, text, tree });
  while (entries.length > maxEntries) entries.pop()!.tree.delete();
  return tree;
}
