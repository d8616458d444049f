// UTF-8 ⇄ base64 with the Web APIs both Workers and Node have (no Buffer).
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// A table walk rather than btoa over a binary string: Node's btoa is several times slower, and
// the admission webhook encodes a patch on every review (B8).
export function encodeBase64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  const out: string[] = [];
  let chunk = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    chunk += ALPHABET[n >>> 18]! + ALPHABET[(n >>> 12) & 63]! + ALPHABET[(n >>> 6) & 63]! + ALPHABET[n & 63]!;
    if (chunk.length >= 8192) {
      out.push(chunk);
      chunk = "";
    }
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    chunk += `${ALPHABET[n >>> 18]!}${ALPHABET[(n >>> 12) & 63]!}==`;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    chunk += `${ALPHABET[n >>> 18]!}${ALPHABET[(n >>> 12) & 63]!}${ALPHABET[(n >>> 6) & 63]!}=`;
  }
  out.push(chunk);
  return out.join("");
}

export function decodeBase64(b64: string): string {
  const binary = atob(b64.replace(/\s+/g, ""));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}
