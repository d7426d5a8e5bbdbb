import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { replaceGeneratedBlock } from "../support/generatedBlocks.js";
import { repoRoot } from "../support/processes.js";

const doc =
  "# Title\n\nby hand\n<!-- generated:table -->\n| old |\n<!-- /generated:table -->\nby hand too\n";

describe("generated blocks of hand-written documents", () => {
  it("rewrites only what lies between a block's markers", () => {
    const rewritten = replaceGeneratedBlock(doc, "table", "| new |\n| rows |");
    expect(rewritten).toBe(
      "# Title\n\nby hand\n<!-- generated:table -->\n| new |\n| rows |\n<!-- /generated:table -->\nby hand too\n",
    );
  });

  it("refuses a document without the block, naming it", () => {
    expect(() => replaceGeneratedBlock(doc, "chaos", "x")).toThrow(/no block chaos/);
    const reversed = "<!-- /generated:table -->\n<!-- generated:table -->\n";
    expect(() => replaceGeneratedBlock(reversed, "table", "x")).toThrow(/no block table/);
  });

  it("finds both blocks npm run reliability rewrites in docs/RELIABILITY.md", async () => {
    const reliability = await readFile(`${repoRoot}/docs/RELIABILITY.md`, "utf8");
    for (const name of ["scenarios", "chaos"])
      expect(() => replaceGeneratedBlock(reliability, name, "x\n")).not.toThrow();
  });
});
