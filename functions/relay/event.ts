// What the watch relay POSTs to /v1/relay (the Standard Webhooks payload shape: type, timestamp,
// data), and the names a StatefulSet reference must match. Shared by the app (Worker and Node) and
// the relay (Node).
import * as z from "zod";

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const Namespace = z.string().max(63).regex(dns1123Label, "must be a DNS-1123 label (lower case letters, digits, '-')");
export const Name = z.string().max(253).regex(dns1123Subdomain, "must be a DNS-1123 subdomain (lower case letters, digits, '-', '.')");

export const RelayEvent = z.object({
  type: z.literal("statefulset.changed"),
  timestamp: z.iso.datetime(),
  data: z.object({ namespace: Namespace, name: Name, causes: z.array(z.string().max(512)).max(50).optional() }),
});
export type RelayEvent = z.infer<typeof RelayEvent>;
