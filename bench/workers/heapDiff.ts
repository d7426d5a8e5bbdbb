/**
 * Compares two V8 heap snapshots (as `bench/workers/heapReader.ts` writes them with
 * `BENCH_HEAP_SNAPSHOT`): the objects of each kind (node type and constructor or name) that the
 * second holds more of than the first, by their own size, largest first. What a profile of
 * "what does a parked run hold?" starts from:
 *
 * ```
 * BENCH_HEAP_SNAPSHOT_DIR=/tmp/snap npm run bench -- --only sessions10k --quick
 * npx tsx bench/workers/heapDiff.ts /tmp/snap/sessions10k-before.heapsnapshot \
 *   /tmp/snap/sessions10k-parked.heapsnapshot 1000
 * ```
 *
 * The optional third argument divides the differences (e.g. by the runs parked), to read
 * them per run.
 */
import { readFile } from "node:fs/promises";

/** The parts of a snapshot's JSON this reads. */
interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Objects of one kind: how many, and their own size (bytes). */
interface Tally {
  count: number;
  bytes: number;
}

/** Counts the nodes of a snapshot by `type:name` (strings by type alone). */
async function tallySnapshot(path: string): Promise<Map<string, Tally>> {
  const { snapshot, nodes, strings } = JSON.parse(await readFile(path, "utf8")) as Snapshot;
  const fields = snapshot.meta.node_fields;
  const types = snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const at = (i: number, field: number | undefined) => nodes[i + (field ?? 0)] ?? 0;
  const tallies = new Map<string, Tally>();
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[at(i, typeAt)] ?? "?";
    const named = type === "object" || type === "closure" || type === "native" || type === "hidden";
    const key = named ? `${type}:${(strings[at(i, nameAt)] ?? "").slice(0, 60)}` : type;
    const tally = tallies.get(key) ?? { count: 0, bytes: 0 };
    tally.count++;
    tally.bytes += at(i, sizeAt);
    tallies.set(key, tally);
  }
  return tallies;
}

async function main(): Promise<void> {
  const [beforePath, afterPath, perArg] = process.argv.slice(2);
  if (!beforePath || !afterPath) throw new Error("usage: heapDiff <before> <after> [divisor]");
  const per = Number(perArg ?? 1);
  const [before, after] = await Promise.all([tallySnapshot(beforePath), tallySnapshot(afterPath)]);
  const rows = [...after].map(([key, a]) => {
    const b = before.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: (a.count - b.count) / per, bytes: (a.bytes - b.bytes) / per };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  const total = rows.reduce((sum, r) => sum + r.bytes, 0);
  console.log(`total own-size difference: ${total.toFixed(0)} bytes${per > 1 ? " per unit" : ""}`);
  for (const row of rows.slice(0, 40))
    console.log(
      `${row.bytes.toFixed(0).padStart(10)} B  ${row.count.toFixed(2).padStart(8)} ×  ${row.key}`,
    );
}

main().catch((err: unknown) => {
  console.error(`heap diff failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
