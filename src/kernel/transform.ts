/**
 * A cell of TypeScript -> the JavaScript the executor runs, its source map, and the names the cell
 * declares at its top level.
 *
 * The cell runs as the body of a strict generator function whose top-level `await e` are `yield e`
 * (the executor resumes it, each step under vm's SIGINT watchdog), or of an async function when it
 * has a top-level `for await` or `await using` (see `mode`). Every
 * top-level declaration of the cell stays a real declaration of that function (const stays const;
 * classes, enums, namespaces and functions are emitted by TypeScript as in a module) and is
 * registered on the kernel's scope (a null-prototype object) as an accessor: get, and set for what
 * can be assigned. A later cell reads and assigns it through the scope: the type checker finds the
 * identifiers that name an earlier cell's declaration (check.ts, `references`), and the transform
 * writes them `$rbp$scope.X` (also in `{ X }` shorthand, template literals and destructuring
 * targets). So closures see the new value of a `let`, a name a later cell declares again is
 * replaced (the new definition wins), and every other name (Math, a local) is an ordinary, fast
 * binding.
 *
 * Rewritten by the transform (and nothing else):
 * - references to earlier cells' names, as above;
 * - `import ... from "x"` -> `const ... = await $rbp$import("x")` (type-only imports vanish);
 *   `import x = require("y")` -> `const x = require("y")`;
 * - `export` modifiers and `export { ... }` / `export * from` are dropped; `export default e` evaluates `e`;
 * - the last statement, when it is an expression statement, returns `{ value: e }`.
 *
 * @example
 * const cell = transformCell("const x = 1;\nx + 1", "/nb/__rbp_cell_1.mts");
 * cell.declared; // ["x"]
 * cell.hasValue; // true
 */
import ts from "typescript";

/** Names the generated code uses (the wrapper's parameters). */
export const SCOPE_NAME = "$rbp$scope";
export const IMPORT_NAME = "$rbp$import";
export const REQUIRE_NAME = "require";
export const INPUT_NAME = "input";
/** Object.defineProperty, given to the wrapper: a cell may declare a name `Object` of its own. */
export const DEFINE_NAME = "$rbp$define";

/** A version 3 source map. */
export interface RawSourceMap {
  version: number;
  file?: string;
  sourceRoot?: string;
  sources: string[];
  names: string[];
  mappings: string;
}

export interface TransformedCell {
  /** A function expression: `(function (scope, import, require, input, define) { ... })`, returning the cell's promise. */
  js: string;
  /** The source map of `js` (version 3, lines of `js`), back to the cell's code. */
  map: RawSourceMap;
  /** Value names the cell declares at its top level (registered on the scope). */
  declared: string[];
  /** Names among `declared` that can be assigned (let, var, function, class, enum, namespace, import =). */
  assignable: string[];
  /** True when the cell ends in an expression statement. */
  hasValue: boolean;
  /**
   * How the cell's body runs. "generator": a generator function whose top-level `await e` are
   * `yield [e, offset of the await in the cell]`, so the executor resumes it step by step, each step under vm's SIGINT watchdog (a busy
   * loop after an `await` can be interrupted). "async": an async function (a cell with a top-level
   * `for await` or `await using`, whose awaits TypeScript's own emit needs).
   */
  mode: "generator" | "async";
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  sourceMap: true,
  inlineSources: false,
  removeComments: false,
  esModuleInterop: true,
  useDefineForClassFields: true,
  experimentalDecorators: false,
};

/** Compiles one cell. `fileName` is the name the source map gives the cell (a `.mts` file: a module). */
export function transformCell(code: string, fileName: string, references: ReadonlySet<number> = new Set()): TransformedCell {
  const declared = new Set<string>();
  const assignable = new Set<string>();
  let hasValue = false;
  let mode: TransformedCell["mode"] = "generator";
  const cellTransformer: ts.TransformerFactory<ts.SourceFile> = (context) => (source) => {
    const f = context.factory;
    const visit = referenceVisitor(context, source, references);
    if (needsNativeAwait(source)) mode = "async";
    const yields = mode === "generator" ? topLevelAwaitVisitor(context, source) : undefined;
    // The import's own wait: a yield in a generator (with no position: the import statement's frame is the module's own).
    const wait = (e: ts.Expression, at: ts.Node): ts.Expression =>
      yields ? f.createParenthesizedExpression(f.createYieldExpression(undefined, awaited(f, e, at.getStart(source)))) : f.createAwaitExpression(e);
    const statements: ts.Statement[] = [];
    for (let statement of source.statements) {
      if (references.size > 0) statement = ts.visitNode(statement, visit) as ts.Statement;
      if (yields) statement = ts.visitNode(statement, yields) as ts.Statement;
      statements.push(...rewriteTopLevel(statement, f, declared, assignable, wait));
    }
    const last = lastNonEmpty(statements);
    if (last >= 0) {
      const statement = statements[last];
      if (ts.isExpressionStatement(statement)) {
        hasValue = true;
        const value = f.createObjectLiteralExpression([f.createPropertyAssignment("value", statement.expression)]);
        statements[last] = ts.setTextRange(f.createReturnStatement(value), statement);
      }
    }
    return f.updateSourceFile(source, statements);
  };
  const output = ts.transpileModule(code, {
    compilerOptions: COMPILER_OPTIONS,
    fileName,
    reportDiagnostics: false,
    transformers: { before: [cellTransformer] },
  });
  const body = output.outputText.replace(/\/\/# sourceMappingURL=.*\s*$/, "").replace(/^export \{\};\s*$/m, "");
  const names = [...declared];
  const register = names
    .map((name) => {
      const setter = assignable.has(name) ? `, set: (v) => { ${name} = v; }` : "";
      return `${DEFINE_NAME}(${SCOPE_NAME}, ${JSON.stringify(name)}, { get: () => ${name}${setter}, enumerable: true, configurable: true });`;
    })
    .join(" ");
  // One line of prefix: the source map's lines are shifted by exactly one (the ";" below).
  const js =
    `(function (${SCOPE_NAME}, ${IMPORT_NAME}, ${REQUIRE_NAME}, ${INPUT_NAME}, ${DEFINE_NAME}) { "use strict"; return (${(mode as string) === "async" ? "async function" : "function*"} () { ${register}\n` +
    body +
    `\n}).call(undefined); })`;
  const map = JSON.parse(output.sourceMapText ?? '{"version":3,"sources":[],"names":[],"mappings":""}') as RawSourceMap;
  map.mappings = ";" + map.mappings;
  return { js, map, declared: names, assignable: [...assignable], hasValue, mode };
}

/** Whether a node starts a scope of its own for `await` (a function; a class's members). */
function isAwaitBoundary(node: ts.Node): boolean {
  return ts.isFunctionLike(node) || ts.isClassLike(node);
}

/** A top-level `for await` or `await using`: awaits that TypeScript's emit writes itself. */
function needsNativeAwait(source: ts.SourceFile): boolean {
  const visit = (node: ts.Node): boolean => {
    if (isAwaitBoundary(node)) return false;
    if (ts.isForOfStatement(node) && node.awaitModifier) return true;
    if (ts.isVariableDeclarationList(node) && (node.flags & ts.NodeFlags.BlockScoped) === ts.NodeFlags.AwaitUsing) return true;
    return ts.forEachChild(node, visit) === true;
  };
  return ts.forEachChild(source, visit) === true;
}

/** What a cell's generator yields for `await e` at `offset` of the cell: `[e, offset]` (the executor reports where the cell waited). */
function awaited(f: ts.NodeFactory, e: ts.Expression, offset: number): ts.Expression {
  return f.createArrayLiteralExpression([e, f.createNumericLiteral(offset)]);
}

/** `await e` at the cell's top level (not inside a function) -> `(yield [e, offset])`. */
function topLevelAwaitVisitor(context: ts.TransformationContext, source: ts.SourceFile): ts.Visitor {
  const f = context.factory;
  const visit = (node: ts.Node): ts.VisitResult<ts.Node> => {
    if (isAwaitBoundary(node)) return node;
    if (ts.isAwaitExpression(node)) {
      const operand = ts.visitNode(node.expression, visit) as ts.Expression;
      const yielded = ts.setTextRange(f.createYieldExpression(undefined, awaited(f, operand, node.getStart(source))), node);
      return ts.setTextRange(f.createParenthesizedExpression(yielded), node);
    }
    return ts.visitEachChild(node, visit, context);
  };
  return visit;
}

/**
 * Rewrites the references to earlier cells' names (the identifiers starting at `references`, found
 * by the type checker, so shadowing is already resolved) into reads and writes of the scope:
 * `X` -> `$rbp$scope.X`, `{ X }` -> `{ X: $rbp$scope.X }`, `f()` -> `(0, $rbp$scope.f)()` (a call
 * without a receiver, as in a module).
 */
function referenceVisitor(context: ts.TransformationContext, source: ts.SourceFile, references: ReadonlySet<number>): ts.Visitor {
  const f = context.factory;
  const isReference = (node: ts.Node): node is ts.Identifier => ts.isIdentifier(node) && node.pos >= 0 && references.has(node.getStart(source));
  // Every generated node carries the identifier's range: the source map sends its positions (a
  // stack frame's column, a call's) to the identifier the user wrote.
  const at = <T extends ts.Node>(node: T, name: ts.Identifier): T => ts.setTextRange(node, name);
  const access = (name: ts.Identifier) =>
    at(f.createPropertyAccessExpression(at(f.createIdentifier(SCOPE_NAME), name), at(f.createIdentifier(name.text), name)), name);
  // `(0, $rbp$scope.f)(...)`: V8 places the call at its `(`, which follows the callee's end; that
  // end is mapped to the start of `f`, as a stack frame of `f(...)` in a module points.
  const unbound = (name: ts.Identifier) => {
    const callee = at(f.createParenthesizedExpression(at(f.createCommaListExpression([f.createNumericLiteral(0), access(name)]), name)), name);
    const start = name.getStart(source);
    return ts.setSourceMapRange(callee, { pos: start, end: start });
  };
  const visit = (node: ts.Node): ts.VisitResult<ts.Node> => {
    if (ts.isTypeNode(node) && !ts.isExpressionWithTypeArguments(node)) return node;
    if (ts.isShorthandPropertyAssignment(node) && isReference(node.name)) {
      const value = node.objectAssignmentInitializer
        ? f.createAssignment(access(node.name), ts.visitNode(node.objectAssignmentInitializer, visit) as ts.Expression)
        : access(node.name);
      return ts.setTextRange(f.createPropertyAssignment(node.name.text, value), node);
    }
    if (ts.isCallExpression(node) && isReference(node.expression)) {
      return f.updateCallExpression(node, unbound(node.expression), node.typeArguments, ts.visitNodes(node.arguments, visit, ts.isExpression));
    }
    if (ts.isTaggedTemplateExpression(node) && isReference(node.tag)) {
      return f.updateTaggedTemplateExpression(node, unbound(node.tag), node.typeArguments, ts.visitNode(node.template, visit) as ts.TemplateLiteral);
    }
    if (isReference(node)) return access(node);
    return ts.visitEachChild(node, visit, context);
  };
  return visit;
}

function lastNonEmpty(statements: readonly ts.Statement[]): number {
  for (let i = statements.length - 1; i >= 0; i--) {
    if (!ts.isEmptyStatement(statements[i])) return i;
  }
  return -1;
}

function hasModifier(node: ts.Node, kind: ts.SyntaxKind): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);
}

/** The node without its `export` / `default` modifiers. */
function withoutExport<T extends ts.Node>(node: T, f: ts.NodeFactory): T {
  if (!ts.canHaveModifiers(node)) return node;
  const modifiers = ts.getModifiers(node) ?? [];
  if (!modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword || m.kind === ts.SyntaxKind.DefaultKeyword)) return node;
  const kept = modifiers.filter((m) => m.kind !== ts.SyntaxKind.ExportKeyword && m.kind !== ts.SyntaxKind.DefaultKeyword);
  return f.replaceModifiers(node, kept) as unknown as T;
}

/** Names bound by a binding name (identifiers in destructuring patterns). */
export function boundNames(name: ts.BindingName, into: string[] = []): string[] {
  if (ts.isIdentifier(name)) into.push(name.text);
  else
    for (const element of name.elements) {
      if (!ts.isOmittedExpression(element)) boundNames(element.name, into);
    }
  return into;
}

/** True when a namespace declares values (TypeScript emits a `var` for it). */
function isInstantiated(node: ts.ModuleDeclaration): boolean {
  const body = node.body;
  if (!body) return false;
  if (ts.isModuleDeclaration(body)) return isInstantiated(body);
  if (!ts.isModuleBlock(body)) return false;
  return body.statements.some((s) => {
    if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) return false;
    if (ts.isModuleDeclaration(s)) return isInstantiated(s);
    if (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) return false;
    if (ts.isEnumDeclaration(s) || ts.isVariableStatement(s) || ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) {
      return !hasModifier(s, ts.SyntaxKind.DeclareKeyword);
    }
    return true;
  });
}

type Wait = (e: ts.Expression, at: ts.Node) => ts.Expression;

function rewriteTopLevel(statement: ts.Statement, f: ts.NodeFactory, declared: Set<string>, assignable: Set<string>, wait: Wait): ts.Statement[] {
  const ambient = hasModifier(statement, ts.SyntaxKind.DeclareKeyword);
  if (ts.isImportDeclaration(statement)) return rewriteImport(statement, f, declared, wait);
  if (ts.isImportEqualsDeclaration(statement)) {
    if (statement.isTypeOnly) return [];
    const ref = statement.moduleReference;
    const init = ts.isExternalModuleReference(ref)
      ? f.createCallExpression(f.createIdentifier(REQUIRE_NAME), undefined, [ref.expression])
      : entityToExpression(ref, f);
    declared.add(statement.name.text);
    assignable.add(statement.name.text);
    return [keep(constStatement(f, statement.name.text, init), statement)];
  }
  if (ts.isExportDeclaration(statement) || (ts.isExportAssignment(statement) && statement.isExportEquals)) return [];
  // `export default e`: e is evaluated, as a declaration (not the cell's value).
  if (ts.isExportAssignment(statement)) return [keep(constStatement(f, f.createUniqueName("$rbp$default"), statement.expression), statement)];
  if (ambient) return [statement];
  if (ts.isVariableStatement(statement)) {
    const isConst = (statement.declarationList.flags & (ts.NodeFlags.Const | ts.NodeFlags.Using | ts.NodeFlags.AwaitUsing)) !== 0;
    for (const d of statement.declarationList.declarations) {
      for (const name of boundNames(d.name)) {
        declared.add(name);
        if (!isConst) assignable.add(name);
      }
    }
    return [withoutExport(statement, f)];
  }
  if (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) {
    if (statement.name) {
      declared.add(statement.name.text);
      assignable.add(statement.name.text);
    } else if (hasModifier(statement, ts.SyntaxKind.DefaultKeyword)) {
      // `export default function () {}`: an expression of its own, evaluated and dropped.
      return [statement];
    }
    return [withoutExport(statement, f)];
  }
  if (ts.isEnumDeclaration(statement)) {
    declared.add(statement.name.text);
    assignable.add(statement.name.text);
    return [withoutExport(statement, f)];
  }
  if (ts.isModuleDeclaration(statement)) {
    if (ts.isIdentifier(statement.name) && isInstantiated(statement)) {
      declared.add(statement.name.text);
      assignable.add(statement.name.text);
    }
    return [withoutExport(statement, f)];
  }
  if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) return [withoutExport(statement, f)];
  return [statement];
}

function keep<T extends ts.Node>(node: T, original: ts.Node): T {
  return ts.setTextRange(node, original);
}

function constStatement(f: ts.NodeFactory, name: string | ts.Identifier, init: ts.Expression): ts.VariableStatement {
  return f.createVariableStatement(
    undefined,
    f.createVariableDeclarationList([f.createVariableDeclaration(name, undefined, undefined, init)], ts.NodeFlags.Const),
  );
}

function entityToExpression(name: ts.EntityName, f: ts.NodeFactory): ts.Expression {
  return ts.isIdentifier(name) ? f.createIdentifier(name.text) : f.createPropertyAccessExpression(entityToExpression(name.left, f), name.right.text);
}

/** `import d, * as ns, { a, b as c } from "x"` -> `const $m = await $rbp$import("x"), d = $m.default, ...`. */
function rewriteImport(node: ts.ImportDeclaration, f: ts.NodeFactory, declared: Set<string>, wait: Wait): ts.Statement[] {
  const clause = node.importClause;
  if (clause?.isTypeOnly) return [];
  const args: ts.Expression[] = [node.moduleSpecifier];
  const attributes = node.attributes;
  if (attributes) {
    const entries = attributes.elements.map((e) => f.createPropertyAssignment(e.name, e.value));
    args.push(f.createObjectLiteralExpression([f.createPropertyAssignment("with", f.createObjectLiteralExpression(entries))]));
  }
  const load = wait(f.createCallExpression(f.createIdentifier(IMPORT_NAME), undefined, args), node);
  if (!clause) return [keep(f.createExpressionStatement(load), node)];
  const declarations: ts.VariableDeclaration[] = [];
  const bindings = clause.namedBindings;
  const named = bindings && ts.isNamedImports(bindings) ? bindings.elements.filter((e) => !e.isTypeOnly) : [];
  let moduleName: ts.Identifier;
  if (bindings && ts.isNamespaceImport(bindings)) {
    moduleName = f.createIdentifier(bindings.name.text);
    declared.add(bindings.name.text);
  } else {
    moduleName = f.createUniqueName("$rbp$module");
  }
  declarations.push(f.createVariableDeclaration(moduleName, undefined, undefined, load));
  if (clause.name) {
    declared.add(clause.name.text);
    declarations.push(f.createVariableDeclaration(clause.name.text, undefined, undefined, f.createPropertyAccessExpression(moduleName, "default")));
  }
  if (named.length > 0) {
    const pattern = f.createObjectBindingPattern(
      named.map((e) => {
        declared.add(e.name.text);
        const property =
          e.propertyName && (ts.isIdentifier(e.propertyName) ? f.createIdentifier(e.propertyName.text) : f.createStringLiteral(e.propertyName.text));
        return f.createBindingElement(undefined, property, e.name.text);
      }),
    );
    declarations.push(f.createVariableDeclaration(pattern, undefined, undefined, moduleName));
  }
  return [keep(f.createVariableStatement(undefined, f.createVariableDeclarationList(declarations, ts.NodeFlags.Const)), node)];
}
