import { readFile } from "node:fs/promises";

/** One execution a chaos tool recorded (`chaos/ledgerTool.mjs`). */
export interface LedgerEntry {
  label: string;
  tool: string;
  pid: number;
  /** `worker-2`, or `coordinator` for an in-process call. */
  where: string;
}

/** Parses ledger text: one `<label> <tool> <pid> <where>` line per execution. */
export function parseLedger(text: string): LedgerEntry[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [label = "", tool = "", pid = "0", where = ""] = line.split(" ");
      return { label, tool, pid: Number(pid), where };
    });
}

/** Reads and parses the ledger file at `path`. */
export async function readLedger(path: string): Promise<LedgerEntry[]> {
  return parseLedger(await readFile(path, "utf8"));
}
