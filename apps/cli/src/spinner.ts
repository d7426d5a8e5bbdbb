const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A one-line status area that redraws in place on a TTY. */
export interface LiveLine {
  /** Replaces the live lines (one per running call). */
  set(lines: string[]): void;
  /** Prints a permanent line above the live lines. */
  print(line: string): void;
  /**
   * Writes text as it comes (a streamed answer) above the live lines, without ending its
   * line: the next permanent line or live line starts on a line of its own.
   */
  write(text: string): void;
  /** Clears the live lines and stops redrawing. */
  stop(): void;
}

/**
 * A live status area for `stream`: on a TTY it redraws a spinner per line every 80 ms; elsewhere
 * (pipes, CI) it only prints permanent lines, so logs stay readable.
 */
export function createLiveLine(stream: NodeJS.WriteStream = process.stdout): LiveLine {
  const tty = stream.isTTY === true;
  let lines: string[] = [];
  let drawn = 0;
  let frame = 0;
  let openText = false; // the last text written has no newline yet
  const endText = () => {
    if (openText) stream.write("\n");
    openText = false;
  };
  const clear = () => {
    if (!tty || drawn === 0) return;
    stream.write(`\x1b[${drawn}A\x1b[0J`);
    drawn = 0;
  };
  const draw = () => {
    if (!tty) return;
    clear();
    if (lines.length > 0) endText();
    const spinner = FRAMES[frame++ % FRAMES.length];
    for (const line of lines) stream.write(`${spinner} ${line}\n`);
    drawn = lines.length;
  };
  const timer = tty ? setInterval(draw, 80) : undefined;
  timer?.unref();
  return {
    set(next) {
      lines = next;
      draw();
    },
    print(line) {
      clear();
      endText();
      stream.write(`${line}\n`);
      draw();
    },
    write(text) {
      if (!text) return;
      clear();
      stream.write(text);
      openText = !text.endsWith("\n");
      draw();
    },
    stop() {
      if (timer) clearInterval(timer);
      clear();
      endText();
      lines = [];
    },
  };
}
