// A bench-only tool file in plain JavaScript, so the compiled processes of the `sessions10k`
// scenario (`node apps/…/dist/main.js`, no tsx) load it through YIEM_TOOLS_DIR: the
// `sessions` scenario's `noopStep` (answers "ok" at once), beside `gateStep` in this folder.
export { getTool } from "../sessionTools/noopStep.mjs";
