/**
 * `npm run chaos`: the chaos soak. Starts two coordinators, three workers (compiled, as
 * deployed), a Redis with AOF (or with `--cluster` a Redis Cluster) and the scripted model;
 * runs thousands of inputs while a seeded driver kills and stops processes and restarts
 * Redis; then checks what Redis and the tools' ledger hold. Prints a table, writes
 * chaos/figures.json (read by `npm run reliability`), exits 1 on any violation.
 */
import { CHAOS_USAGE, parseChaosCommand } from "./options.js";
import { chaosFiguresPath } from "./paths.js";
import { figuresOf, formatReport, writeFigures } from "./report.js";
import { runSoak } from "./soak.js";

function commandLine(options: ReturnType<typeof parseChaosCommand>["soak"]): string {
  const cluster = options.cluster ? " --cluster" : "";
  return `npm run chaos -- --runs ${options.runs} --kills ${options.kills} --seed ${options.seed} --concurrency ${options.concurrency} --minutes ${options.minutes}${cluster}`;
}

async function main(): Promise<number> {
  let command: ReturnType<typeof parseChaosCommand>;
  try {
    command = parseChaosCommand(process.argv.slice(2));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\nusage: ${CHAOS_USAGE}`);
    return 2;
  }
  const { soak } = command;
  console.log(
    `chaos soak: seed ${soak.seed}, ${soak.runs} runs, ${soak.kills} kills${soak.cluster ? ", Redis Cluster" : ""}`,
  );
  const result = await runSoak({ ...soak, log: (line) => console.log(`  ${line}`) });
  const figures = figuresOf(result, commandLine(soak));
  console.log(formatReport(result, figures));
  if (command.writeFigures) {
    await writeFigures(chaosFiguresPath, figures);
    console.log(`figures written to ${chaosFiguresPath}`);
  }
  return figures.violations > 0 ? 1 : 0;
}

process.exitCode = await main();
