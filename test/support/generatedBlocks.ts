/**
 * Blocks of a hand-written Markdown document that a script rewrites: each lies between
 * `<!-- generated:<name> -->` and `<!-- /generated:<name> -->` lines, and everything outside
 * them is left as it is (docs/RELIABILITY.md: its scenario table and chaos figures).
 */

/** The opening and closing marker lines of block `name`. */
function markersOf(name: string): [string, string] {
  return [`<!-- generated:${name} -->`, `<!-- /generated:${name} -->`];
}

/**
 * `doc` with the text of block `name` replaced by `content` (ending in a newline). Throws,
 * naming the block, when the document lacks either marker or has them out of order: a
 * document edited by hand past its markers is never rewritten blindly.
 *
 * @example replaceGeneratedBlock("a\n<!-- generated:x -->\nold\n<!-- /generated:x -->\nb\n", "x", "new\n")
 * // "a\n<!-- generated:x -->\nnew\n<!-- /generated:x -->\nb\n"
 */
export function replaceGeneratedBlock(doc: string, name: string, content: string): string {
  const [open, close] = markersOf(name);
  const start = doc.indexOf(`${open}\n`);
  const end = doc.indexOf(close);
  if (start < 0 || end < 0 || end < start)
    throw new Error(`the document has no block ${name} (lines ${open} … ${close})`);
  const body = content.endsWith("\n") ? content : `${content}\n`;
  return `${doc.slice(0, start + open.length + 1)}${body}${doc.slice(end)}`;
}
