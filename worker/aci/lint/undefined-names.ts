/**
 * Names a Python file uses but never defines, in the manner of pyflakes' F821 ("undefined name"), from
 * the tree-sitter tree on the host: function, lambda and class scopes (a class body's names are not
 * seen by its methods), imports, parameters, assignment targets, `global`/`nonlocal`, and builtins.
 * It errs towards silence: order within a scope is ignored, comprehension variables belong to the
 * enclosing scope, match patterns bind every name they hold, and `from x import *` turns it off.
 */
import type * as TreeSitter from "@vscode/tree-sitter-wasm";
import { parseCached } from "./tree-cache.js";

type Node = TreeSitter.Node;

const builtins = new Set(
  (
    "ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError BrokenPipeError BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError Exception ExceptionGroup False FileExistsError FileNotFoundError FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError ModuleNotFoundError NameError None NotADirectoryError NotImplemented NotImplementedError OSError OverflowError PendingDeprecationWarning PermissionError ProcessLookupError PythonFinalizationError RecursionError ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError True TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning ValueError Warning WindowsError ZeroDivisionError " +
    "abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license list locals map max memoryview min next object oct open ord pow print property quit range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip " +
    "__file__ __name__ __doc__ __builtins__ __spec__ __loader__ __package__ __path__ __debug__ __import__ __build_class__ __class__ __module__ __qualname__ __annotations__ __dict__"
  ).split(" "),
);

interface Scope {
  kind: "module" | "function" | "class";
  parent: Scope | null;
  names: Set<string>;
}

interface Use {
  name: string;
  line: number;
  scope: Scope;
}

class Walker {
  readonly module: Scope = { kind: "module", parent: null, names: new Set() };
  readonly uses: Use[] = [];
  starImport = false;

  visit(node: Node, scope: Scope): void {
    switch (node.type) {
      case "identifier":
        this.uses.push({ name: node.text, line: node.startPosition.row + 1, scope });
        return;
      case "function_definition":
      case "lambda":
        this.callable(node, scope);
        return;
      case "class_definition":
        this.classDefinition(node, scope);
        return;
      case "import_statement":
      case "import_from_statement":
        this.importNames(node, scope);
        return;
      case "global_statement":
      case "nonlocal_statement":
        for (const child of node.namedChildren)
          if (child?.type === "identifier") this.bindEverywhere(child.text, scope);
        return;
      case "attribute":
        this.field(node, "object", scope);
        return;
      case "keyword_argument":
        this.field(node, "value", scope);
        return;
      case "assignment":
      case "augmented_assignment":
      case "for_statement":
      case "for_in_clause":
        this.targets(node.childForFieldName("left"), scope);
        for (const child of node.namedChildren)
          if (child && child.id !== node.childForFieldName("left")?.id) this.visit(child, scope);
        return;
      case "named_expression":
        this.targets(node.childForFieldName("name"), scope);
        this.field(node, "value", scope);
        return;
      case "as_pattern_target":
      case "case_pattern":
      case "type_parameter":
        this.targets(node, scope, true);
        return;
      default:
        for (const child of node.namedChildren) if (child) this.visit(child, scope);
    }
  }

  private field(node: Node, name: string, scope: Scope): void {
    const child = node.childForFieldName(name);
    if (child) this.visit(child, scope);
  }

  private bindEverywhere(name: string, scope: Scope): void {
    scope.names.add(name);
    this.module.names.add(name);
  }

  /** Binds the names of a target; `a.b = ...` and `a[i] = ...` use `a`. `all`: every identifier binds. */
  private targets(node: Node | null, scope: Scope, all = false): void {
    if (!node) return;
    if (node.type === "identifier") {
      scope.names.add(node.text);
      return;
    }
    if (!all && (node.type === "attribute" || node.type === "subscript")) {
      this.visit(node, scope);
      return;
    }
    for (const child of node.namedChildren) if (child) this.targets(child, scope, all);
  }

  private callable(node: Node, scope: Scope): void {
    const name = node.childForFieldName("name");
    if (name) scope.names.add(name.text);
    // PEP 695: `def f[T](x: T) -> T` sees T in its annotations and body, through a scope of its own.
    const typeParameters = node.childForFieldName("type_parameters");
    const typeScope: Scope = typeParameters ? { kind: "function", parent: scope, names: new Set() } : scope;
    if (typeParameters) this.targets(typeParameters, typeScope, true);
    const inner: Scope = { kind: "function", parent: typeScope, names: new Set() };
    const parameters = node.childForFieldName("parameters");
    if (parameters)
      for (const child of parameters.namedChildren) if (child) this.parameter(child, typeScope, inner);
    this.field(node, "return_type", typeScope);
    this.field(node, "body", inner);
  }

  /** Binds a parameter in the function's scope; its default and annotation are read in the enclosing one. */
  private parameter(node: Node, outer: Scope, inner: Scope): void {
    if (node.type === "identifier") {
      inner.names.add(node.text);
      return;
    }
    const name = node.childForFieldName("name");
    if (name) {
      // default_parameter, typed_default_parameter: `name[: type] = value`.
      inner.names.add(name.text);
      this.field(node, "type", outer);
      this.field(node, "value", outer);
      return;
    }
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === "identifier" || child.type.endsWith("splat_pattern"))
        this.parameter(child, outer, inner);
      else this.visit(child, outer);
    }
  }

  private classDefinition(node: Node, scope: Scope): void {
    const name = node.childForFieldName("name");
    if (name) scope.names.add(name.text);
    const inner: Scope = { kind: "class", parent: scope, names: new Set() };
    const typeParameters = node.childForFieldName("type_parameters");
    if (typeParameters) this.targets(typeParameters, inner, true);
    this.field(node, "superclasses", scope);
    this.field(node, "body", inner);
  }

  private importNames(node: Node, scope: Scope): void {
    for (const child of node.namedChildren) {
      if (!child || child.id === node.childForFieldName("module_name")?.id) continue;
      if (child.type === "wildcard_import") this.starImport = true;
      else if (child.type === "aliased_import") {
        const alias = child.childForFieldName("alias");
        if (alias) scope.names.add(alias.text);
      } else if (child.type === "dotted_name") {
        // `import a.b` binds a; `from m import a` binds a.
        const first = child.namedChildren[0];
        if (first) scope.names.add(first.text);
      }
    }
  }

  resolves(use: Use): boolean {
    if (builtins.has(use.name) || use.scope.names.has(use.name)) return true;
    for (let scope = use.scope.parent; scope; scope = scope.parent) {
      // A class body's names are not visible from the functions inside it.
      if (scope.kind !== "class" && scope.names.has(use.name)) return true;
    }
    return false;
  }
}

/** Undefined names of a Python text with the lines they are used on; null when it cannot tell (`import *`). */
export async function undefinedNames(text: string, base?: string): Promise<Map<string, number[]> | null> {
  const tree = await parseCached("python", text, base);
  const walker = new Walker();
  walker.visit(tree.rootNode, walker.module);
  if (walker.starImport) return null;
  const found = new Map<string, number[]>();
  for (const use of walker.uses) {
    if (walker.resolves(use)) continue;
    const lines = found.get(use.name) ?? [];
    if (!lines.includes(use.line)) lines.push(use.line);
    found.set(use.name, lines);
  }
  return found;
}

/**
 * The warning after an accepted edit of a Python file when it leaves names undefined that were not
 * undefined before; null otherwise (other languages, nothing new, or a check that cannot tell).
 */
export async function newUndefinedNamesWarning(
  path: string,
  before: string,
  after: string,
): Promise<string | null> {
  if (!/\.pyi?$/.test(path)) return null;
  const old = await undefinedNames(before);
  const now = await undefinedNames(after, before);
  if (!old || !now) return null;
  const fresh = [...now].filter(([name]) => !old.has(name));
  if (fresh.length === 0) return null;
  const listed = fresh
    .map(([name, lines]) => `'${name}' (line${lines.length > 1 ? "s" : ""} ${lines.slice(0, 5).join(", ")})`)
    .join(", ");
  return `Warning: after this edit, ${path} uses undefined name(s): ${listed}. Import or define them, or fix the spelling (pyflakes F821).`;
}
