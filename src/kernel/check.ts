/**
 * Type checking of cells, and the language service behind completion and inspect.
 *
 * Every cell is a virtual ES module (`<cwd>/__rbp_cell_<n>.mts`) of a warm TypeScript language
 * service, so imports resolve from the kernel's folder as they would for a module there (NodeNext).
 * Below the cell's own text (so that its positions are the user's) the checker appends a trailer:
 *
 *     import { X } from "./__rbp_cell_1.mjs"; declare let y: typeof import("./__rbp_cell_1.mjs").y;
 *     import { f } from "./__rbp_cell_2.mjs";
 *     export { ...the names this cell declares };
 *
 * It imports every name an earlier cell declared (from the latest cell that declared it) that this
 * cell does not declare itself: a cell that declares a name again replaces it (the new definition
 * wins, and a redeclared `const` is no type error). Only the new cell is checked; the earlier ones
 * are already checked and their types are read lazily. A `let` or `var` of an earlier cell is not
 * imported but declared (`declare let n: typeof import("./__rbp_cell_1.mjs").n;`), so later cells
 * can assign it, with its type checked. Assigning any other earlier name (an import binding, TS2632)
 * reads as tsc's TS2588 "Cannot assign to 'x' because it is a constant.".
 *
 * @example
 * const checker = new CellChecker("/path/to/notebook/folder");
 * const first = checker.check("const x = 1;");
 * checker.commit(first);
 * checker.check('const y: string = x;').diagnostics[0].code; // 2322
 */
import { createRequire } from "node:module";
import path from "node:path";
import ts from "typescript";
import { boundNames } from "./transform.js";

export interface CellDiagnostic {
  /** 0-based line and column in the cell's code (UTF-16 columns). */
  line: number;
  column: number;
  code: number;
  category: "error" | "warning" | "message" | "suggestion";
  message: string;
  /** A syntax error (the parser's), not a type error. */
  syntactic: boolean;
}

export interface CheckedCell {
  /** The file the cell keeps when committed. */
  fileName: string;
  code: string;
  /** The code with its trailer. */
  text: string;
  diagnostics: CellDiagnostic[];
  /** Every name the cell declares at its top level (values and types). */
  names: string[];
  /** Names among `names` whose declaration is `let` or `var`. */
  mutable: string[];
  /** Start offsets of the identifiers that name an earlier cell's declaration (for the transform). */
  references: number[];
  /** The cell declares for every later cell (`declare global`, `declare module "x"`). */
  global: boolean;
}

const CELL_PREFIX = "__rbp_cell_";

/** Globals the kernel gives every cell (execute.ts defines them). */
export const KERNEL_GLOBALS = `/** Asks the front end for a line of text (Jupyter's input_request); rejects where the front end allows no input. */
declare function input(prompt?: string, options?: { password?: boolean }): Promise<string>;
`;
const IMPORT_ASSIGNMENT = 2632;
const CONST_ASSIGNMENT = 2588;
const CANNOT_FIND_NAME = 2304;
const IMPLICIT_ANY_VARIABLE = 7005;
/** How many check results the checker keeps (cells run again). */
const RESULTS_KEPT = 256;

/** The folder holding @types/node for the checker (the kernel's own: a notebook folder may have none). */
function typeRoots(): string[] {
  try {
    const pkg = createRequire(import.meta.url).resolve("@types/node/package.json");
    return [path.dirname(path.dirname(pkg))];
  } catch {
    return [];
  }
}

export function compilerOptions(): ts.CompilerOptions {
  const roots = typeRoots();
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    moduleDetection: ts.ModuleDetectionKind.Force,
    lib: ["lib.es2023.d.ts", "lib.esnext.disposable.d.ts"],
    types: roots.length > 0 ? ["node"] : [],
    typeRoots: roots,
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    resolveJsonModule: true,
    allowJs: false,
    noEmit: true,
    preserveConstEnums: true,
    useDefineForClassFields: true,
  };
}

/** Top-level names of a cell's source: every meaning, and which are `let`/`var`. */
export function topLevelNames(source: ts.SourceFile): { names: string[]; mutable: string[]; exported: string[]; global: boolean } {
  let global = false;
  const names = new Set<string>();
  const mutable = new Set<string>();
  const exported = new Set<string>();
  const add = (name: string, node: ts.Node, isMutable = false) => {
    names.add(name);
    if (isMutable) mutable.add(name);
    if (ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) exported.add(name);
  };
  for (const s of source.statements) {
    if (ts.isVariableStatement(s)) {
      const isMutable = (s.declarationList.flags & ts.NodeFlags.BlockScoped) === 0 || (s.declarationList.flags & ts.NodeFlags.Let) !== 0;
      for (const d of s.declarationList.declarations) for (const n of boundNames(d.name)) add(n, s, isMutable);
    } else if (
      ts.isFunctionDeclaration(s) ||
      ts.isClassDeclaration(s) ||
      ts.isInterfaceDeclaration(s) ||
      ts.isTypeAliasDeclaration(s) ||
      ts.isEnumDeclaration(s)
    ) {
      if (s.name) add(s.name.text, s);
    } else if (ts.isModuleDeclaration(s)) {
      // `declare global { ... }` and `declare module "x" { ... }` declare for every later cell.
      if ((s.flags & ts.NodeFlags.GlobalAugmentation) !== 0 || ts.isStringLiteral(s.name)) global = true;
      else add(s.name.text, s);
    } else if (ts.isImportEqualsDeclaration(s)) {
      add(s.name.text, s);
    } else if (ts.isExportDeclaration(s) && !s.moduleSpecifier && s.exportClause && ts.isNamedExports(s.exportClause)) {
      // `export { a, b as c }`: the trailer must not export these names again.
      for (const e of s.exportClause.elements) exported.add(e.name.text);
    } else if (ts.isImportDeclaration(s) && s.importClause) {
      const clause = s.importClause;
      if (clause.name) add(clause.name.text, s);
      const b = clause.namedBindings;
      if (b && ts.isNamespaceImport(b)) add(b.name.text, s);
      else if (b) for (const e of b.elements) add(e.name.text, s);
    }
  }
  return { names: [...names], mutable: [...mutable], exported: [...exported], global };
}

let registry: ts.DocumentRegistry | undefined;

/** One document registry per process: kernels (and tests) share the parsed lib and package files. */
function documents(): ts.DocumentRegistry {
  registry ??= ts.createDocumentRegistry(ts.sys.useCaseSensitiveFileNames, process.cwd());
  return registry;
}

/** Every identifier a cell mentions (names it may take from earlier cells). */
export function identifiers(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) names.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

interface VirtualFile {
  text: string;
  version: number;
}

/** The language service over the cells of one kernel. */
export class CellChecker {
  readonly cwd: string;
  readonly options: ts.CompilerOptions;
  private readonly files = new Map<string, VirtualFile>();
  /** Committed cells, oldest first. */
  private readonly committed: string[] = [];
  /** Name -> the committed cell that declared it last. */
  private readonly owners = new Map<string, string>();
  /** Names whose latest declaration is `let` or `var`. */
  private readonly mutable = new Set<string>();
  /** Committed cells with `declare global` or `declare module "x"`: every later cell imports them. */
  private readonly globalCells: string[] = [];
  private readonly snapshots = new Map<string, ts.IScriptSnapshot | undefined>();
  /** The file every new cell is checked as. */
  private readonly pendingName: string;
  /** The declarations of the kernel's globals. */
  private readonly globalsName: string;
  private pendingVersion = 0;
  private next = 1;
  private readonly service: ts.LanguageService;
  private readonly resolutions: ts.ModuleResolutionCache;
  /** Results of checks by the cell's text with its trailer (least recently used first). */
  private readonly results = new Map<string, { diagnostics: CellDiagnostic[]; references: number[] }>();
  private readonly typeReferences: ts.TypeReferenceDirectiveResolutionCache;

  constructor(cwd: string) {
    this.cwd = path.resolve(cwd);
    this.options = compilerOptions();
    this.pendingName = path.join(this.cwd, `${CELL_PREFIX}pending.mts`);
    this.globalsName = path.join(this.cwd, "__rbp_globals.d.ts");
    this.files.set(this.globalsName, { text: KERNEL_GLOBALS, version: 1 });
    // getModuleResolutionCache is read by the service (typescript.js, synchronizeHostData) though not in its public host type.
    const host: ts.LanguageServiceHost & { getModuleResolutionCache(): ts.ModuleResolutionCache } = {
      getCompilationSettings: () => this.options,
      getScriptFileNames: () => [this.globalsName, this.pendingName],
      getScriptVersion: (fileName) => String(this.files.get(fileName)?.version ?? 0),
      getScriptSnapshot: (fileName) => this.snapshot(fileName),
      getCurrentDirectory: () => this.cwd,
      getDefaultLibFileName: (options) => ts.getDefaultLibFilePath(options),
      fileExists: (fileName) => this.files.has(fileName) || ts.sys.fileExists(fileName),
      readFile: (fileName) => this.files.get(fileName)?.text ?? ts.sys.readFile(fileName),
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
      realpath: ts.sys.realpath,
      useCaseSensitiveFileNames: () => ts.sys.useCaseSensitiveFileNames,
      // One resolution cache for the kernel's life (package.json scopes, node_modules lookups): a new
      // program per cell would otherwise read every package.json again.
      getModuleResolutionCache: () => this.resolutions,
      resolveModuleNameLiterals: (literals, containingFile, redirected, options, containingSourceFile) =>
        literals.map((literal) =>
          ts.resolveModuleName(
            literal.text,
            containingFile,
            options,
            host,
            this.resolutions,
            redirected,
            ts.getModeForUsageLocation(containingSourceFile, literal, options),
          ),
        ),
      resolveTypeReferenceDirectiveReferences: (references, containingFile, redirected, options, containingSourceFile) =>
        references.map((reference) => {
          const name = typeof reference === "string" ? reference : reference.fileName.toLowerCase();
          const mode = ts.getModeForFileReference(reference, containingSourceFile?.impliedNodeFormat);
          return ts.resolveTypeReferenceDirective(name, containingFile, options, host, redirected, this.typeReferences, mode);
        }),
    };
    const canonical = (name: string) => (ts.sys.useCaseSensitiveFileNames ? name : name.toLowerCase());
    this.resolutions = ts.createModuleResolutionCache(this.cwd, canonical, this.options);
    this.typeReferences = ts.createTypeReferenceDirectiveResolutionCache(this.cwd, canonical, this.options, this.resolutions.getPackageJsonInfoCache());
    this.service = ts.createLanguageService(host, documents());
  }

  private snapshot(fileName: string): ts.IScriptSnapshot | undefined {
    const file = this.files.get(fileName);
    if (file) return ts.ScriptSnapshot.fromString(file.text);
    if (!this.snapshots.has(fileName)) {
      const text = ts.sys.readFile(fileName);
      this.snapshots.set(fileName, text === undefined ? undefined : ts.ScriptSnapshot.fromString(text));
    }
    return this.snapshots.get(fileName);
  }

  /** The file name of the next cell (an ES module in the kernel's folder). */
  private nextFileName(): string {
    return path.join(this.cwd, `${CELL_PREFIX}${this.next++}.mts`);
  }

  /**
   * The cell's text with its trailer: imports of the earlier cells' names that it uses (or that
   * `wanted` accepts), exports of its own. Importing only the names a cell mentions keeps the
   * program small: a cell that names nothing from earlier cells is checked with the libraries only.
   */
  private withTrailer(code: string, own: { names: string[]; exported: string[] }, used: Set<string>, wanted?: (name: string) => boolean): string {
    const mine = new Set(own.names);
    const byCell = new Map<string, string[]>();
    for (const [name, owner] of this.owners) {
      if (mine.has(name) || !(used.has(name) || wanted?.(name))) continue;
      const list = byCell.get(owner) ?? [];
      list.push(name);
      byCell.set(owner, list);
    }
    const specifier = (owner: string) => JSON.stringify(`./${path.basename(owner, ".mts")}.mjs`);
    const imports = [...byCell].map(([owner, names]) => {
      const bindings = names.filter((n) => !this.mutable.has(n));
      // A `let`/`var` of an earlier cell can be assigned: a variable of its declared type, not an import.
      const variables = names.filter((n) => this.mutable.has(n)).map((n) => `declare let ${n}: typeof import(${specifier(owner)}).${n};`);
      return [bindings.length > 0 ? `import { ${bindings.join(", ")} } from ${specifier(owner)};` : "", ...variables].join(" ");
    });
    imports.push(...this.globalCells.map((cell) => `import ${specifier(cell)};`));
    const alreadyExported = new Set(own.exported);
    const exports = own.names.filter((n) => !alreadyExported.has(n));
    return `${code}\n;${imports.join(" ")} export { ${exports.join(", ")} };\n`;
  }

  /**
   * Puts code in the pending slot (one file name for every new cell, the only root of the program,
   * so the service reuses the program's structure: the earlier cells are reached through the
   * trailer's imports) and returns the names it declares.
   */
  private setPending(code: string, wanted?: (name: string) => boolean): { text: string; names: string[]; mutable: string[]; global: boolean } {
    const prepared = this.prepare(code, wanted);
    // The same text keeps its version: the service's program stays up to date (completions as the user types on).
    if (this.files.get(this.pendingName)?.text !== prepared.text) this.files.set(this.pendingName, { text: prepared.text, version: ++this.pendingVersion });
    return prepared;
  }

  /** The text of a cell with its trailer, and the names it declares. */
  private prepare(code: string, wanted?: (name: string) => boolean): { text: string; names: string[]; mutable: string[]; global: boolean } {
    const source = ts.createSourceFile("cell.mts", code, ts.ScriptTarget.ES2022, false);
    const own = topLevelNames(source);
    return { text: this.withTrailer(code, own, identifiers(source), wanted), names: own.names, mutable: own.mutable, global: own.global };
  }

  /** Type-checks a cell against the cells committed so far. */
  check(code: string): CheckedCell {
    let checked = this.checkPending(code);
    // A name no cell declares: again with every earlier name in scope, for tsc's "Did you mean ...?".
    if (this.owners.size > 0 && checked.diagnostics.some((d) => d.code === CANNOT_FIND_NAME)) checked = this.checkPending(code, () => true);
    return checked;
  }

  private checkPending(code: string, wanted?: (name: string) => boolean): CheckedCell {
    // The same text (code and trailer) names the same committed cells, which never change, and the
    // files outside are read once: the check's result is the same. A cell run again costs a lookup.
    const prepared = this.prepare(code, wanted);
    const known = this.results.get(prepared.text);
    if (known) {
      this.results.delete(prepared.text);
      this.results.set(prepared.text, known);
      return { fileName: this.nextFileName(), code, ...prepared, diagnostics: known.diagnostics, references: known.references };
    }
    const checked = this.checkText(code, wanted);
    this.results.set(checked.text, { diagnostics: checked.diagnostics, references: checked.references });
    if (this.results.size > RESULTS_KEPT) this.results.delete(this.results.keys().next().value as string);
    return checked;
  }

  private checkText(code: string, wanted?: (name: string) => boolean): CheckedCell {
    const { text, names, mutable, global } = this.setPending(code, wanted);
    const fileName = this.pendingName;
    const syntactic = this.service.getSyntacticDiagnostics(fileName);
    const diagnostics: CellDiagnostic[] = [];
    const source = this.service.getProgram()?.getSourceFile(fileName);
    const push = (d: ts.Diagnostic, isSyntactic: boolean) => {
      if (!source) return;
      // Past the cell: an unterminated comment or literal ran into the trailer (shown at the cell's
      // end); a type error there is the trailer's own (not the user's: dropped).
      if ((d.start ?? 0) > code.length && !isSyntactic) return;
      const start = Math.min(d.start ?? 0, code.length);
      // An earlier cell's `let x;` (evolving any) read here: its flow type stays in its cell.
      if (d.code === IMPLICIT_ANY_VARIABLE && this.owners.has(code.slice(start, start + (d.length ?? 0)))) return;
      let codeNumber = d.code;
      let message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
      if (codeNumber === IMPORT_ASSIGNMENT) {
        const name = code.slice(start, start + (d.length ?? 0));
        codeNumber = CONST_ASSIGNMENT;
        message = `Cannot assign to '${name}' because it is a constant.`;
      }
      const { line, character } = source.getLineAndCharacterOfPosition(start);
      diagnostics.push({ line, column: character, code: codeNumber, category: categoryName(d.category), message, syntactic: isSyntactic });
    };
    for (const d of syntactic) push(d, true);
    if (syntactic.length === 0) for (const d of this.service.getSemanticDiagnostics(fileName)) push(d, false);
    const failed = diagnostics.some((d) => d.category === "error");
    const references = failed || !source || text.length === code.length ? [] : this.earlierReferences(source, code.length);
    return { fileName: this.nextFileName(), code, text, diagnostics, names, mutable, references, global };
  }

  /**
   * Where the cell names a declaration of an earlier cell: the start offsets of the identifiers
   * whose symbol is declared in the trailer (an import or a `declare let` of an earlier cell's
   * name), the checker having resolved every shadowing local already. Shorthand properties count
   * by the value they name.
   */
  private earlierReferences(source: ts.SourceFile, end: number): number[] {
    const checker = this.service.getProgram()?.getTypeChecker();
    if (!checker) return [];
    const fromTrailer = (symbol: ts.Symbol | undefined) => symbol?.declarations?.some((d) => d.getSourceFile() === source && d.pos >= end) === true;
    const found: number[] = [];
    const visit = (node: ts.Node): void => {
      if (node.pos >= end) return;
      if (ts.isIdentifier(node)) {
        const parent = node.parent;
        const symbol =
          ts.isShorthandPropertyAssignment(parent) && parent.name === node
            ? checker.getShorthandAssignmentValueSymbol(parent)
            : checker.getSymbolAtLocation(node);
        if (fromTrailer(symbol)) found.push(node.getStart(source));
        return;
      }
      ts.forEachChild(node, visit);
    };
    ts.forEachChild(source, visit);
    return found;
  }

  /** Keeps a checked cell: its declarations become visible to the next cells. */
  commit(cell: CheckedCell): void {
    if (this.files.has(cell.fileName)) return;
    this.files.set(cell.fileName, { text: cell.text, version: 1 });
    this.committed.push(cell.fileName);
    if (cell.global) this.globalCells.push(cell.fileName);
    const mutable = new Set(cell.mutable);
    for (const name of cell.names) {
      this.owners.set(name, cell.fileName);
      if (mutable.has(name)) this.mutable.add(name);
      else this.mutable.delete(name);
    }
  }

  /** Completions at a UTF-16 offset of code that is not yet a cell. */
  completions(code: string, offset: number, prefix = ""): ts.CompletionInfo | undefined {
    const lower = prefix.toLowerCase();
    this.setPending(code, (name) => name.toLowerCase().startsWith(lower));
    return this.service.getCompletionsAtPosition(this.pendingName, offset, {
      includeCompletionsForModuleExports: false,
      includeCompletionsWithInsertText: false,
    });
  }

  /** Quick info (type and doc comment) at a UTF-16 offset of code that is not yet a cell. */
  quickInfo(code: string, offset: number): ts.QuickInfo | undefined {
    this.setPending(code);
    const at = (o: number) => this.service.getQuickInfoAtPosition(this.pendingName, o);
    return at(offset) ?? (offset > 0 ? at(offset - 1) : undefined);
  }

  /** The language service (the pending file is the last code given to check, completions or quickInfo). */
  get languageService(): ts.LanguageService {
    return this.service;
  }

  /**
   * Loads lib files and @types/node into the service (a first check of an empty cell), or what
   * `code` imports as well (its check is not committed: no cell sees it).
   */
  warm(code = ""): void {
    this.check(code);
  }

  dispose(): void {
    this.service.dispose();
  }
}

function categoryName(category: ts.DiagnosticCategory): CellDiagnostic["category"] {
  switch (category) {
    case ts.DiagnosticCategory.Error:
      return "error";
    case ts.DiagnosticCategory.Warning:
      return "warning";
    case ts.DiagnosticCategory.Suggestion:
      return "suggestion";
    default:
      return "message";
  }
}

/**
 * A diagnostic as tsc prints it, with the cell for the file: `cell 3, line 2:7 - error TS2322: ...`
 * (1-based line and column).
 */
export function formatDiagnostic(d: CellDiagnostic, cellLabel: string): string {
  return `${cellLabel}, line ${d.line + 1}:${d.column + 1} - ${d.category} TS${d.code}: ${d.message}`;
}
