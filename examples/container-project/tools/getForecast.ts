import { defineTool } from "@yiem/core";
import { z } from "zod";

/** `getForecast`: a zod tool; in the image `@yiem/core` and `zod` resolve from /app/node_modules. */
export default defineTool({
  name: "getForecast",
  description: "The weather forecast for a city",
  parameters: z.object({ city: z.string(), days: z.number().int().max(7).default(1) }),
  parallelToolExecute: true, // may run beside other calls: on the tool workers
  execute: ({ city, days }) => `Sunny in ${city} for ${days} day(s)`,
});
