// What the watch relay POSTs to /v1/relay (the Standard Webhooks payload shape: type, timestamp,
// data), and the names a StatefulSet reference must match. Shared by the app (Worker and Node) and
// the relay (Node).
import * as z from "../../core/zod.js";

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const Namespace = z
  .string()
  .check(z.maxLength(63), z.regex(dns1123Label, "must be a DNS-1123 label (lower case letters, digits, '-')"));
export const Name = z
  .string()
  .check(
    z.maxLength(253),
    z.regex(dns1123Subdomain, "must be a DNS-1123 subdomain (lower case letters, digits, '-', '.')"),
  );

export const RelayEvent = z.object({
  type: z.literal("statefulset.changed"),
  timestamp: z.iso.datetime(),
  data: z.object({
    namespace: Namespace,
    name: Name,
    causes: z.optional(z.array(z.string().check(z.maxLength(512))).check(z.maxLength(50))),
  }),
});
export type RelayEvent = z.infer<typeof RelayEvent>;
