/**
 * Import rules of the repo, checked by `npm run lint` (`depcruise`). They are the rules of
 * docs/ARCHITECTURE.md, "Code layout: a folder per process": a file's folder says which
 * process runs it, and a folder imports only what every process that runs it also runs.
 */

const core = "^packages/core/src/";
const lifecycleFolders = `${core}(types|tools|loop|llm)/`;
const clusterFolders = `${core}(protocol|state|ops|coordinator|worker|client|redis)/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import cycles anywhere: the folders and the files in them form a DAG.",
      from: {},
      to: { circular: true },
    },
    {
      name: "protocol-imports-no-cluster-folder",
      severity: "error",
      comment:
        "protocol/ is what travels between processes: it imports nothing of the other cluster folders.",
      from: { path: `${core}protocol/` },
      to: { path: `${core}(state|ops|coordinator|worker|client|redis)/` },
    },
    {
      name: "errors-import-nothing",
      comment:
        "errors/ (the YiemError base, @yiem/core/errors) is imported by every folder and process, the CLI at start-up: it imports no other file.",
      severity: "error",
      from: { path: `${core}errors/` },
      to: { path: "^", pathNot: `${core}errors/` },
    },
    {
      name: "client-imports-no-coordinator-or-worker",
      severity: "error",
      comment: "client/ (@yiem/core/client) never imports the coordinator's or a worker's code.",
      from: { path: `${core}client/` },
      to: { path: `${core}(coordinator|worker)/` },
    },
    {
      name: "client-reaches-no-server-package",
      severity: "error",
      comment:
        "@yiem/core/client loads no express, Bull Board, openai, QuickJS or the MCP SDK, not even through another file.",
      from: { path: `${core}client/` },
      to: {
        path: "(^|/)node_modules/(express|@bull-board|openai|quickjs-emscripten[^/]*|@jitl|@modelcontextprotocol)/",
        reachable: true,
      },
    },
    {
      name: "coordinator-imports-no-worker",
      severity: "error",
      comment:
        "The coordinator and a tool worker are separate processes: neither imports the other.",
      from: { path: `${core}coordinator/` },
      to: { path: `${core}worker/` },
    },
    {
      name: "worker-imports-no-coordinator",
      severity: "error",
      comment:
        "The coordinator and a tool worker are separate processes: neither imports the other.",
      from: { path: `${core}worker/` },
      to: { path: `${core}coordinator/` },
    },
    {
      name: "lifecycle-imports-no-cluster-folder",
      severity: "error",
      comment:
        "The tool lifecycle (types/, tools/, agent/, llm/) runs without a cluster: it imports no cluster folder.",
      from: { path: lifecycleFolders },
      to: { path: clusterFolders },
    },
    {
      name: "runner-and-intake-import-no-feature",
      severity: "error",
      comment:
        "The session runner and the request intake call the run features through the seam (features/runFeature.ts) only: they name no feature.",
      from: { path: `${core}coordinator/(run|intake)/` },
      to: { path: `${core}features/[^/]+/` },
    },
    {
      name: "no-feature-imports-another",
      severity: "error",
      comment:
        "A run feature imports no other feature: features meet only through the seam (features/*.ts).",
      from: { path: `${core}features/([^/]+)/` },
      to: { path: `${core}features/[^/]+/`, pathNot: `${core}features/$1/` },
    },
    {
      name: "client-imports-only-feature-protocols-and-stores",
      severity: "error",
      comment:
        "@yiem/core/client may import a feature's protocol file (pure shapes) and its store (the durable reads clients share with coordinators), never its coordinator side (the feature, its executor, intake or services).",
      from: { path: `${core}client/` },
      to: {
        path: `${core}features/[^/]+/`,
        pathNot: `${core}features/[^/]+/(protocol|[a-zA-Z]+Store)\\.ts$`,
      },
    },
    {
      name: "settings-catalogue-imports-nothing-else",
      severity: "error",
      comment:
        "The settings catalogue and its readers import nothing else of @yiem/core but the error base (errors/, which imports nothing), so every folder (the lifecycle's too) may read settings without a cycle.",
      from: { path: `${core}settings/(catalogue|parsers|setting|readSettings|configError)\\.ts$` },
      to: { path: core, pathNot: `${core}(settings|errors)/` },
    },
    {
      name: "outside-imports-packages-by-name",
      severity: "error",
      comment:
        "test/, bench/, scripts/, chaos/ and apps/ import @yiem/core, @yiem/core/client, @yiem/core/internal, @yiem/tools or @yiem/testing, never a file under packages/*/src.",
      from: { path: "^(test|bench|scripts|chaos|apps)/" },
      to: {
        path: "^packages/[^/]+/src/",
        // `@yiem/core` resolves (yiem-source condition) to packages/core/src/index.ts too, as
        // an aliased workspace; a relative import ("../../packages/…") is local only.
        dependencyTypes: ["local"],
        dependencyTypesNot: ["aliased", "aliased-workspace"],
      },
    },
  ],
  options: {
    doNotFollow: { path: "(^|/)node_modules/" },
    exclude: { path: "(^|/)dist/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["yiem-source", "import", "types", "default"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".d.ts", ".json"],
      mainFields: ["module", "main", "types"],
    },
  },
};
