/**
 * The API reports of the public entry points, `api/<report>.api.md`, written by
 * `@microsoft/api-extractor` from the `.d.ts` files `tsc -b` puts in `dist/` (the npm scripts
 * build first). `npm run api` rewrites the reports; `npm run api:check` (run by
 * `npm run lint`) fails when a report differs from what the code exports, when a public
 * signature names a type its entry does not export, or when `@yiem/core` lacks a name of
 * `@yiem/core/client`, or `@yiem/core/client` one of `@yiem/core/errors` (each promises all of
 * them). `@yiem/core/internal` has no report: it promises nothing.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type IConfigFile,
} from "@microsoft/api-extractor";
import ts from "typescript";

const root = fileURLToPath(new URL("../", import.meta.url));

/** One public entry point and the report that records it. */
interface ReportedEntry {
  /** `api/<report>.api.md`. */
  report: string;
  /** The package folder, relative to the repository root. */
  packageDir: string;
  /** The entry's declaration file, relative to the package folder. */
  types: string;
}

const ENTRIES: ReportedEntry[] = [
  { report: "core", packageDir: "packages/core", types: "dist/index.d.ts" },
  { report: "core-client", packageDir: "packages/core", types: "dist/client/index.d.ts" },
  { report: "core-errors", packageDir: "packages/core", types: "dist/errors/index.d.ts" },
  { report: "tools", packageDir: "packages/tools", types: "dist/index.d.ts" },
  { report: "testing", packageDir: "packages/testing", types: "dist/index.d.ts" },
];

/** An entry that promises every name of another (`part`) too. */
interface PartOfWhole {
  part: string;
  whole: string;
}

/**
 * `@yiem/core/client` is a part of `@yiem/core`, and `@yiem/core/errors` of
 * `@yiem/core/client`: every name of each part is in its whole.
 */
const PARTS_OF: PartOfWhole[] = [
  { part: "packages/core/dist/client/index.d.ts", whole: "packages/core/dist/index.d.ts" },
  { part: "packages/core/dist/errors/index.d.ts", whole: "packages/core/dist/client/index.d.ts" },
];

/** The api-extractor configuration of one entry: a report only, no rollup, no doc model. */
function configOf(entry: ReportedEntry): IConfigFile {
  const projectFolder = `${root}${entry.packageDir}`;
  return {
    projectFolder,
    mainEntryPointFilePath: `${projectFolder}/${entry.types}`,
    bundledPackages: [],
    newlineKind: "lf",
    compiler: { tsconfigFilePath: `${projectFolder}/tsconfig.json` },
    apiReport: {
      enabled: true,
      reportFileName: `${entry.report}.api.md`,
      reportFolder: `${root}api/`,
      reportTempFolder: `${root}dist/api/`,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
        // A public signature that names a type the entry does not export.
        "ae-forgotten-export": { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
        // Yiem's JSDoc has no @public / @beta tags: everything an entry exports is public.
        "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
        // Fields without JSDoc show as "(undocumented)" in the report, which is enough.
        "ae-undocumented": { logLevel: ExtractorLogLevel.None },
      },
      // The JSDoc is written for people, not checked as TSDoc.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

/** Writes (`local`) or checks one entry's report; true when it is up to date and clean. */
function reportEntry(entry: ReportedEntry, local: boolean): boolean {
  const types = `${root}${entry.packageDir}/${entry.types}`;
  if (!existsSync(types)) {
    console.error(`${entry.packageDir}/${entry.types} is missing: build first (npm run build)`);
    return false;
  }
  const config = ExtractorConfig.prepare({
    configObject: configOf(entry),
    configObjectFullPath: undefined,
    packageJsonFullPath: `${root}${entry.packageDir}/package.json`,
  });
  const result = Extractor.invoke(config, { localBuild: local, showVerboseMessages: false });
  if (result.succeeded) return true;
  console.error(
    `api/${entry.report}.api.md: ${result.errorCount} error(s), ${result.warningCount} warning(s)` +
      (result.apiReportChanged ? "; the public API changed: run `npm run api` and commit" : ""),
  );
  return false;
}

/** The names (values and types) a declaration file exports. */
function exportedNames(program: ts.Program, file: string): Set<string> {
  const source = program.getSourceFile(file);
  const module = source && program.getTypeChecker().getSymbolAtLocation(source);
  if (!module) throw new Error(`${file}: not a module`);
  return new Set(
    program
      .getTypeChecker()
      .getExportsOfModule(module)
      .map((name) => name.name),
  );
}

/** True when the whole entry exports every name of the part; else names the missing ones. */
function checkPartOfWhole(entries: PartOfWhole): boolean {
  const [part, whole] = [`${root}${entries.part}`, `${root}${entries.whole}`];
  const program = ts.createProgram([part, whole], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: true,
  });
  const wholeNames = exportedNames(program, whole);
  const missing = [...exportedNames(program, part)].filter((name) => !wholeNames.has(name));
  if (missing.length === 0) return true;
  console.error(`${entries.whole} does not export ${missing.join(", ")} of ${entries.part}`);
  return false;
}

const local = process.argv.includes("--local");
const failed = ENTRIES.filter((entry) => !reportEntry(entry, local));
const partOfWhole = PARTS_OF.map(checkPartOfWhole).every(Boolean);
if (failed.length > 0 || !partOfWhole) process.exitCode = 1;
