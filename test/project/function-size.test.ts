/**
 * No function in src/ runs over LONGEST lines unless a comment right above it says why it is long
 * ("Long on purpose: ..."), as the engine's hot loops do: a function that long usually holds several
 * roles, and the next reader should find each role named as its own function (docs/architecture.md).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO } from "../notebook/package.js";

const LONGEST = 100;
const WHY = /Long on purpose:/;

interface Sized {
  where: string;
  name: string;
  lines: number;
  explained: boolean;
}

/** The functions, methods and constructors of one source text with their line counts. */
function functionsOf(file: string, text: string): Sized[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Sized[] = [];
  const visit = (node: ts.Node): void => {
    let name: string | undefined;
    let anchor: ts.Node = node;
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessor(node)) {
      name = node.name?.getText(sf) ?? "constructor";
    } else if ((ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && ts.isVariableDeclaration(node.parent)) {
      name = node.parent.name.getText(sf);
      anchor = node.parent.parent.parent; // the variable statement, where its comment sits
    }
    if (name !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.end).line;
      const comments = ts.getLeadingCommentRanges(text, anchor.getFullStart()) ?? [];
      const explained = comments.some((c) => WHY.test(text.slice(c.pos, c.end)));
      found.push({ where: `${file}:${first + 1}`, name, lines: last - first + 1, explained });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function sourceFiles(): string[] {
  return execFileSync("git", ["ls-files", "src"], { cwd: REPO, encoding: "utf8" })
    .split("\n")
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
}

describe("function size", () => {
  it(`no function in src/ is over ${LONGEST} lines without a comment that says why`, () => {
    const long = sourceFiles()
      .flatMap((f) => functionsOf(f, readFileSync(join(REPO, f), "utf8")))
      .filter((s) => s.lines > LONGEST && !s.explained)
      .map((s) => `${s.where} ${s.name}: ${s.lines} lines`);
    expect(long).toEqual([]);
  });

  it("finds a long function and accepts one whose comment says why (the check can fail)", () => {
    const body = Array.from({ length: LONGEST + 5 }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const bare = functionsOf("x.ts", `function big() {\n${body}\n}\n`);
    expect(bare).toEqual([{ where: "x.ts:1", name: "big", lines: LONGEST + 7, explained: false }]);
    const said = functionsOf("x.ts", `// Long on purpose: one pass over the rows.\nconst big = () => {\n${body}\n};\n`);
    expect(said.map((s) => [s.name, s.explained])).toEqual([["big", true]]);
  });
});
