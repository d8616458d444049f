// Bounds on a YAML body, checked before it is parsed. Parsing (composing) YAML is recursive and, for
// large mappings, superlinear: 256 KiB of `[` cost ~1 s of CPU before failing with a stack overflow,
// and one mapping of 30,000 keys ~8 s. The lexer is linear and streams tokens, so it measures nesting
// depth and node count and stops at the first token beyond a limit: an attack costs microseconds.
// Every place YAML enters uses it: the HTTP route's bodies (functions/app.ts) and the files read
// from the GitOps repository (adapters/gitops/manifest.ts, set-manifest.ts). Aliases count once
// here, as written: what they expand to is bounded once parsed (the yaml library's maxAliasCount;
// parseRepositoryYaml turns its ReferenceError into a ManifestError naming the file).
import { CST, Lexer } from "yaml";

export interface YamlLimits {
  /** Nesting of collections (block indentation levels, `- ` items on one line, `[`/`{`). */
  maxDepth: number;
  /** Scalars, aliases, key/value pairs, sequence items and flow collections. */
  maxNodes: number;
}

/** A StatefulSet manifest nests ~15 levels and holds a few hundred nodes. */
export const YAML_LIMITS: YamlLimits = { maxDepth: 64, maxNodes: 5_000 };

/** Undefined when `text` is within the limits, else the message naming the limit exceeded (and `subject`, e.g. a file's path). */
export function yamlOverLimits(
  text: string,
  limits: YamlLimits = YAML_LIMITS,
  subject = "the YAML body",
): string | undefined {
  let flow = 0; // open [ and {
  let nodes = 0;
  let indents: number[] = []; // indentation of the enclosing block lines
  let lineIndent = 0;
  let lineStart = true; // no content yet on this line
  let onLine = 0; // `- ` and `? ` indicators on this line: each opens one more level
  let skipNext = false; // the source of a scalar follows its marker token
  let blockScalar = false; // after `|` or `>`: the next scalar is its content, ending at a line start
  const tooDeep = () => `${subject} nests deeper than ${limits.maxDepth} levels`;
  const tooMany = () => `${subject} holds more than ${limits.maxNodes} nodes`;

  for (const token of new Lexer().lex(text)) {
    if (skipNext) {
      skipNext = false;
      continue;
    }
    const type = CST.tokenType(token);
    if (blockScalar && type === "scalar") {
      // Its lines (and the newline ending it) are in the next token: the next line starts after it.
      blockScalar = false;
      skipNext = true;
      nodes++;
      lineStart = true;
      lineIndent = 0;
      onLine = 0;
      continue;
    }
    switch (type) {
      case "newline":
        lineStart = true;
        lineIndent = 0;
        onLine = 0;
        continue;
      case "space":
        if (lineStart) lineIndent = token.length;
        continue;
      case "comment":
      case "byte-order-mark":
      case "doc-mode":
      case "directive-line":
        continue;
      case "doc-start":
      case "doc-end":
        indents = [];
        continue;
    }
    if (lineStart) {
      lineStart = false;
      if (flow === 0) {
        while (indents.length && indents[indents.length - 1]! >= lineIndent) indents.pop();
        indents.push(lineIndent);
      }
    }
    switch (type) {
      case "flow-seq-start":
      case "flow-map-start":
        flow++;
        nodes++;
        break;
      case "flow-seq-end":
      case "flow-map-end":
        flow = Math.max(0, flow - 1);
        break;
      case "seq-item-ind":
      case "explicit-key-ind":
        onLine++;
        nodes++;
        break;
      case "map-value-ind":
        nodes++;
        break;
      case "scalar":
        skipNext = true;
        nodes++;
        break;
      case "block-scalar-header":
        blockScalar = true;
        break;
      case "single-quoted-scalar":
      case "double-quoted-scalar":
      case "alias":
        nodes++;
        break;
    }
    if (indents.length + onLine + flow > limits.maxDepth) return tooDeep();
    if (nodes > limits.maxNodes) return tooMany();
  }
  return undefined;
}
