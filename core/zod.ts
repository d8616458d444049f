// zod for every module here, Worker and Node alike: zod/mini (functions, not methods, so a bundle
// keeps only what it calls; classic zod was a third of the Worker bundle). Import it as
// `* as z from "./zod.js"`, never from "zod" or "zod/mini" directly (test/core/zod-mini.test.ts).
// Two things classic zod does that zod/mini leaves to us:
// - English messages: without a locale every issue would read "Invalid input".
// - Objects parsed by a function generated for their shape ($ZodObjectJIT), about twice as fast in
//   Node as zod/mini's interpreted walk over the shape. Workers forbid `new Function`, so there zod
//   walks the shape either way (classic zod too); Node (server, CLI, benchmarks) keeps the fast path.

import { en } from "zod/locales";
import * as z from "zod/mini";
import { $constructor, type $ZodObject, type $ZodObjectDef, $ZodObjectJIT } from "zod/v4/core";

z.config(en());

export * from "zod/mini";

// A ZodMiniObject (same traits, members and type) whose parse is $ZodObjectJIT's, as classic
// zod's ZodObject is built. The explicit types let TypeScript call the `init` assertions.
const ObjectJIT: $constructor<$ZodObject> = $ZodObjectJIT;
const MiniObject: $constructor<z.ZodMiniObject> = z.ZodMiniObject;
const ZodMiniObjectJIT = /*@__PURE__*/ $constructor("ZodMiniObjectJIT", (inst: z.ZodMiniObject, def: $ZodObjectDef) => {
  ObjectJIT.init(inst, def);
  MiniObject.init(inst, def);
});
const jit = <T extends z.ZodMiniObject>(schema: T): T => new ZodMiniObjectJIT(schema._zod.def) as T;

export const object: typeof z.object = (shape, params) => jit(z.object(shape, params));
export const strictObject: typeof z.strictObject = (shape, params) => jit(z.strictObject(shape, params));
export const looseObject: typeof z.looseObject = (shape, params) => jit(z.looseObject(shape, params));
