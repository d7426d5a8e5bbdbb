export type * from "./content.js";
export type * from "./events.js";
export type * from "./llm.js";
export type * from "./messages.js";
export type * from "./pipeline.js";
export type * from "./tools.js";
