// The live view of `run` on a terminal.
import { visible } from "./color.js";
import type { Output } from "./io.js";

/** Redraws a block of lines in place on a terminal. */
export class LiveView {
  private lines = 0;
  constructor(private readonly out: Output) {}

  draw(text: string): void {
    // Lines longer than the terminal is wide take several rows (colour codes take none).
    const width = this.out.columns ?? Infinity;
    const height = text
      .split("\n")
      .reduce((rows, line) => rows + Math.max(1, Math.ceil(visible(line).length / width)), 0);
    // Moving up works only within the screen: a taller view is redrawn from the top instead.
    const tall = this.out.rows !== undefined && Math.max(height, this.lines) >= this.out.rows;
    const clear = tall ? "\x1b[H\x1b[2J" : this.lines ? `\x1b[${this.lines}A\x1b[0J` : "";
    this.out.write(`${clear}${text}\n`);
    this.lines = height;
  }
}
