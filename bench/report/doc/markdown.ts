/** Small text helpers for `docs/PERFORMANCE.md`: numbers, counts and Markdown tables. */

/** A number as text with `digits` decimals (NaN, and `null` for a figure not measured, as "n/a"). */
export function num(value: number | null, digits = 2): string {
  return value !== null && Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

/** A count with thousands separated by commas (2000 → "2,000"). */
export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** A Markdown table. */
export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
