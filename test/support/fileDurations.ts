import { readFileSync } from "node:fs";

/** `test/fileDurations.json`: what it is, and the seconds by test file (path from the repository root). */
export interface FileDurations {
  about: string;
  seconds: Record<string, number>;
}

/** Where the seconds each slow test file took are kept (`npm run test:durations` writes it). */
export const fileDurationsPath = new URL("../fileDurations.json", import.meta.url);

/** The seconds of `test/fileDurations.json` by file; none when it is missing or unreadable. */
export function readFileDurations(): Record<string, number> {
  try {
    return (JSON.parse(readFileSync(fileDurationsPath, "utf8")) as FileDurations).seconds;
  } catch {
    return {};
  }
}
